package fstab

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// sharedInventory returns the run's block-device inventory, read once and
// shared with disk-size under blockdev.RunKey (it is read-only once built).
func sharedInventory(ctx context.Context, env *runner.Env) (*blockdev.Inventory, error) {
	r := runner.Shared(env, blockdev.RunKey{}, func() blockdev.Read {
		inv, err := blockdev.ReadInventory(ctx, env.Root, blockdev.InventoryOptions{})
		return blockdev.Read{Inv: inv, Err: err}
	})
	return r.Inv, r.Err
}
