package disk

import (
	"context"
	"math"
	"testing"
)

func TestUsagePercent(t *testing.T) {
	// 1000 blocks, 100 free of which 50 reserved for root: df shows
	// 900 / (900 + 50) = 94.7%.
	u := Usage{BlockSize: 4096, Blocks: 1000, Free: 100, Avail: 50, Files: 200, FilesFree: 20}
	if p, ok := u.UsedPercent(); !ok || math.Abs(p-94.7368) > 0.001 {
		t.Errorf("UsedPercent = %v, %v", p, ok)
	}
	if p, ok := u.InodePercent(); !ok || p != 90 {
		t.Errorf("InodePercent = %v, %v", p, ok)
	}
	if u.Size() != 4096000 || u.UsedBytes() != 900*4096 || u.AvailBytes() != 50*4096 {
		t.Errorf("sizes: %d %d %d", u.Size(), u.UsedBytes(), u.AvailBytes())
	}
	if _, ok := (Usage{BlockSize: 4096}).UsedPercent(); ok {
		t.Error("a zero-sized filesystem has no usage")
	}
	if _, ok := (Usage{Blocks: 10, Free: 5, Avail: 5}).InodePercent(); ok {
		t.Error("btrfs-style Files=0 must report no inode usage")
	}
	// Free larger than Blocks (racy counters) must not wrap around.
	if p, ok := (Usage{Blocks: 10, Free: 11, Avail: 11}).UsedPercent(); !ok || p != 0 {
		t.Errorf("wrapped: %v", p)
	}
}

func TestStatfs(t *testing.T) {
	u, err := Statfs(context.Background(), t.TempDir())
	if err != nil || u.Blocks == 0 || u.BlockSize == 0 {
		t.Fatalf("Statfs(tempdir) = %+v, %v", u, err)
	}
	if _, err := Statfs(context.Background(), "/nonexistent/guestcheck"); err == nil {
		t.Error("Statfs of a missing path succeeded")
	}
}
