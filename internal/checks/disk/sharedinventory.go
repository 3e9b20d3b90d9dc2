package disk

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

type inventoryKey struct{}

type inventoryResult struct {
	inv *Inventory
	err error
}

// sharedInventory returns the run's block-device inventory, read once and
// shared by fstab and disk-size (it is read-only once built): enumerating
// sysfs and probing superblocks is the most expensive thing either check
// does, and twice the cost of a short exec probe under emulation.
func sharedInventory(ctx context.Context, env *runner.Env) (*Inventory, error) {
	r := runner.Shared(env, inventoryKey{}, func() inventoryResult {
		inv, err := ReadInventory(ctx, env.Root, InventoryOptions{})
		return inventoryResult{inv, err}
	})
	return r.inv, r.err
}
