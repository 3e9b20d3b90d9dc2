package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

// TestDevicesOncePerRun: fstab and disk-size share one inventory per run,
// one sysfs walk and one round of superblock probes, not two; a second
// run, or a call without a store, reads again.
func TestDevicesOncePerRun(t *testing.T) {
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
	s := store.New()
	a, err := Devices(context.Background(), s, r)
	if err != nil || a.ByName("vda") == nil {
		t.Fatalf("inventory %+v, %v", a, err)
	}
	if b, _ := Devices(context.Background(), s, r); a != b {
		t.Error("a second check of the same run read the inventory again")
	}
	if c, _ := Devices(context.Background(), store.New(), r); c == a {
		t.Error("two runs share one inventory")
	}
	if c, _ := Devices(context.Background(), nil, r); c == a {
		t.Error("without a store the inventory was not read again")
	}
}
