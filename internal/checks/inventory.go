package checks

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/fs"
)

type inventoryKey struct{}

type inventoryResult struct {
	inv *fs.Inventory
	err error
}

// blockInventory returns the run's block-device inventory, read once and
// shared by fstab and disk-size (it is read-only once built): enumerating
// sysfs and probing superblocks is the most expensive thing either check
// does, and twice the cost of a short exec probe under emulation.
func blockInventory(ctx context.Context, env *check.Env) (*fs.Inventory, error) {
	r := check.Shared(env, inventoryKey{}, func() inventoryResult {
		inv, err := fs.ReadInventory(ctx, env.Root, fs.InventoryOptions{})
		return inventoryResult{inv, err}
	})
	return r.inv, r.err
}
