package checks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/check"
)

// fstab and disk-size share one inventory per run: one sysfs walk and one
// round of superblock probes, not two.
func TestBlockInventorySharedPerRun(t *testing.T) {
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
	env := diskEnv(t, dir, false)
	env.Facts = check.NewFacts()
	a, err := blockInventory(context.Background(), env)
	if err != nil || a.ByName("vda") == nil {
		t.Fatalf("inventory %+v, %v", a, err)
	}
	b, _ := blockInventory(context.Background(), env)
	if a != b {
		t.Error("a second check of the same run read the inventory again")
	}
	// Another run (its own Facts) reads afresh.
	other := *env
	other.Facts = check.NewFacts()
	if c, _ := blockInventory(context.Background(), &other); c == a {
		t.Error("two runs share one inventory")
	}
}
