package fstab

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// fstab and disk-size share one inventory per run: one sysfs walk and one
// round of superblock probes, not two.
func TestInventorySharedPerRun(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "sys/class/block/vda")
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"dev": "253:0\n", "size": "0\n"} {
		if err := os.WriteFile(filepath.Join(dev, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	env := &runner.Env{Root: r, Facts: runner.NewFacts()}
	a, err := sharedInventory(context.Background(), env)
	if err != nil || a.ByName("vda") == nil {
		t.Fatalf("inventory %+v, %v", a, err)
	}
	if b, _ := sharedInventory(context.Background(), env); a != b {
		t.Error("a second check of the same run read the inventory again")
	}
	other := *env
	other.Facts = runner.NewFacts()
	if c, _ := sharedInventory(context.Background(), &other); c == a {
		t.Error("two runs share one inventory")
	}
}
