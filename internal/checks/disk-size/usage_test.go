package disksize

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
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

// usageMountinfo is a mount table with every kind of mount UsageFilesystems
// tells apart.
const usageMountinfo = `22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,discard
30 27 254:16 / /srv/my\040data rw,noatime shared:5 master:2 - xfs /dev/vdb rw,attr2,inode64
31 27 0:45 /@home /home rw,relatime shared:7 - btrfs /dev/vdc rw,space_cache=v2,subvolid=257,subvol=/@home
32 27 0:46 / /var/lib/docker rw,relatime shared:8 - btrfs /dev/vdc rw,subvolid=5,subvol=/
33 27 254:16 /sub /bind rw,noatime - xfs /dev/vdb rw
34 27 0:50 / /nfs rw,relatime - nfs4 host:/export rw,vers=4.2
35 27 7:0 / /snap/core rw - squashfs /dev/loop0 ro
36 27 0:51 / /tmp rw - tmpfs tmpfs rw
37 27 254:16 / /srv/my\040data rw,noatime - xfs /dev/vdd rw
38 27 0:52 / /dev/shm rw - tmpfs  rw
`

func TestUsageFilesystems(t *testing.T) {
	ms, _ := mountinfo.Parse([]byte(usageMountinfo))
	var got []string
	for _, m := range UsageFilesystems(ms) {
		got = append(got, m.MountPoint)
	}
	// proc, nfs, squashfs and tmpfs are left out; the xfs bind mount and the
	// second btrfs subvolume repeat filesystems already listed, and the
	// btrfs top-level mount (subvol=/) is preferred over /@home.
	want := []string{"/", "/srv/my data", "/var/lib/docker"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UsageFilesystems = %q, want %q", got, want)
	}
	container, _ := mountinfo.Parse([]byte("1 0 0:30 / / rw - overlay overlay rw,lowerdir=/l\n2 1 0:31 / /tmp rw - tmpfs tmpfs rw\n"))
	if fs := UsageFilesystems(container); len(fs) != 1 || fs[0].FSType != "overlay" {
		t.Errorf("an overlay root must be kept: %+v", fs)
	}
}
