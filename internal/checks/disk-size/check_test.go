package disksize

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/blockdevtest"
)

// diskUsage returns a statfs result with pct% of blocks and ipct% of inodes used.
func diskUsage(pct, ipct uint64) unix.Statfs_t {
	return unix.Statfs_t{Frsize: 4096, Blocks: 1000000, Bfree: 1000000 - pct*10000, Bavail: 1000000 - pct*10000,
		Files: 100000, Ffree: 100000 - ipct*1000}
}

// fakeGrowDiskVM is a guest whose growpart did not run on the root disk and
// whose data filesystem was not grown after its volume was expanded.
func fakeGrowDiskVM(t *testing.T) *blocktest.System {
	s := blocktest.NewSystem(t)
	const gib = 1 << 30
	gpt := blocktest.GPT{DiskGUID: "01234567-89ab-cdef-0123-456789abcdef", Parts: []blocktest.GPTPart{
		{Type: "0fc63daf-8483-4772-8e79-3d69d8477de4", UUID: blockdevtest.RootPart, Name: "root", First: 2048, Last: 2048 + 4194304 - 1}}}
	s.Add(blocktest.Device{Name: "vda", Major: 254, Minor: 0, Size: 20 * gib, Image: gpt.Image()})
	s.Add(blocktest.Device{Name: "vda1", Major: 254, Minor: 1, Parent: "vda", Partition: 1, Start: 2048 * 512, Size: 2 * gib,
		Image: blockdevtest.Ext4(blockdevtest.RootUUID, "root", 2048)})
	s.Add(blocktest.Device{Name: "vdb", Major: 254, Minor: 16, Size: 10 * gib,
		Image: blocktest.XFS{UUID: blockdevtest.DataUUID, BlockSize: 4096, Blocks: 5 * 262144}.Image()})
	s.Add(blocktest.Device{Name: "vdc", Major: 254, Minor: 32, Size: 4 * gib, Image: blocktest.Btrfs{UUID: blockdevtest.LogsUUID, DevSize: 4 * gib}.Image()})
	s.Add(blocktest.Device{Name: "vdd", Major: 254, Minor: 48, Size: gib, Image: blockdevtest.Ext4(blockdevtest.CloneUUID, "", 1024-8)})
	s.Add(blocktest.Device{Name: "vdn", Major: 254, Minor: 208, Size: gib, NoNode: true})
	s.WriteFile("proc/self/mountinfo", strings.Join([]string{
		"20 1 254:1 / / rw - ext4 /dev/vda1 rw",
		"21 20 0:5 / /proc rw - proc proc rw",
		"22 20 254:16 / /data rw - xfs /dev/vdb rw",
		"23 20 0:40 / /pool rw - btrfs /dev/vdc rw,subvol=/",
		"24 20 0:41 /@snap /pool/snap rw - btrfs /dev/vdc rw,subvol=/@snap",
		"25 20 254:48 / /srv rw - ext4 /dev/vdd rw",
		"26 20 0:50 / /nfs rw - nfs4 server:/x rw",
		"27 20 7:0 / /snap/core rw - squashfs /dev/loop0 ro",
		"28 20 254:0 / /broken rw - ext4 /dev/vda rw",
		"29 20 254:208 / /opt rw - ext4 /dev/vdn rw",
		"",
	}, "\n"))
	return s
}

// fakeDiskStatfs is an Env.Statfs answering for the mount points of us
// under dir, and failing with EIO elsewhere.
func fakeDiskStatfs(dir string, us map[string]unix.Statfs_t) func(string, *unix.Statfs_t) error {
	return func(p string, st *unix.Statfs_t) error {
		rel, _ := filepath.Rel(dir, p)
		u, ok := us["/"+strings.TrimPrefix(rel, ".")]
		if !ok {
			return unix.EIO
		}
		*st = u
		return nil
	}
}

// diskByMount indexes findings by their mount_point detail.
func diskByMount(fs []runner.Finding) map[string][]runner.Finding {
	m := map[string][]runner.Finding{}
	for _, f := range fs {
		m[f.Detail["mount_point"]] = append(m[f.Detail["mount_point"]], f)
	}
	return m
}

func TestDiskSizeFakeVM(t *testing.T) {
	s := fakeGrowDiskVM(t)
	e := blockdevtest.Env(t, s.Dir, true)
	us := map[string]unix.Statfs_t{"/": diskUsage(50, 96), "/data": diskUsage(95, 10), "/srv": diskUsage(10, 99), "/opt": diskUsage(1, 1)}
	btrfs := diskUsage(98, 0)
	btrfs.Files, btrfs.Ffree = 0, 0 // btrfs reports no inode count
	us["/pool"] = btrfs
	e.Statfs = fakeDiskStatfs(s.Dir, us)
	fs := Run(context.Background(), e)
	checktest.Conventions(t, fs, Codes)
	got := diskByMount(fs)
	want := map[string]string{
		"/":       "warn:disk-inodes-high warn:disk-partition-not-grown",
		"/data":   "warn:disk-fs-not-grown warn:disk-usage-high",
		"/pool":   "fail:disk-usage-critical",
		"/srv":    "fail:disk-inodes-critical",
		"/broken": "error:disk-statfs-failed",
		"/opt":    "pass:disk-usage-ok skip:disk-size-unverified",
	}
	blockdevtest.WantGroups(t, got, want)
	for _, f := range got["/"] {
		if f.Code == codeDiskPartNotGrown.ID {
			if f.Detail["unallocated_after_partition"] != "18.0 GiB" || f.Detail["disk"] != "/dev/vda" ||
				!strings.Contains(f.Remediation, "growpart /dev/vda 1") || !strings.Contains(f.Remediation, "resize2fs /dev/vda1") ||
				!strings.Contains(f.Remediation, "cc_growpart") {
				t.Errorf("partition not grown: %+v", f)
			}
		}
	}
	data := got["/data"]
	for _, f := range data {
		if f.Code == codeDiskFSNotGrown.ID && (f.Detail["fs_size"] != "5.0 GiB" || f.Detail["device_size"] != "10.0 GiB" ||
			f.Detail["unused_bytes"] != "5368709120" || !strings.Contains(f.Remediation, "xfs_growfs /data")) {
			t.Errorf("fs not grown: %+v", f)
		}
		if f.Code == codeDiskUsageHigh.ID && (f.Detail["used_percent"] != "95.0" || f.Detail["warn_percent"] != "90") {
			t.Errorf("usage high: %+v", f)
		}
	}
	if f := got["/pool"][0]; f.Detail["inodes"] != "not reported by this filesystem" {
		t.Errorf("btrfs inodes detail = %q", f.Detail["inodes"])
	}

	// Thresholds come from the config; a filesystem 8 MiB short of its
	// device is within the slack and passes.
	e.Config = config.Default()
	settings.Set(e.Config, Settings{WarnPercent: 40, FailPercent: 99})
	got = diskByMount(Run(context.Background(), e))
	if c := blockdevtest.Codes(got["/srv"]); c != "warn:disk-inodes-high" {
		t.Errorf("/srv with thresholds 40/99: %s (99%% is not over 99%%)", c)
	}
	if c := blockdevtest.Codes(got["/pool"]); c != "warn:disk-usage-high" {
		t.Errorf("/pool with thresholds 40/99: %s", c)
	}
	us["/srv"] = diskUsage(10, 10)
	got = diskByMount(Run(context.Background(), e))
	if c := blockdevtest.Codes(got["/srv"]); c != "pass:disk-usage-ok" || got["/srv"][0].Message != "/srv is 10.0% full (390.6 MiB of 3.8 GiB), inodes 10.0%" ||
		got["/srv"][0].Detail["fs_size"] != "1016.0 MiB" {
		t.Errorf("/srv ok: %s %+v", c, got["/srv"])
	}
}

func TestDiskSizeNotLiveAndNoMountinfo(t *testing.T) {
	s := blocktest.NewSystem(t)
	fs := Run(context.Background(), blockdevtest.Env(t, s.Dir, false))
	if len(fs) != 1 || fs[0].Code != codeDiskNotLive.ID || fs[0].Status != runner.Skip {
		t.Errorf("not live: %+v", fs)
	}
	fs = Run(context.Background(), blockdevtest.Env(t, s.Dir, true))
	checktest.Conventions(t, fs, Codes)
	if len(fs) != 1 || fs[0].Code != codeDiskStateUnreadable.ID || fs[0].Status != runner.Error {
		t.Errorf("no mountinfo: %+v", fs)
	}
}

func TestNotGrownThreshold(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, c := range []struct {
		gap, size int64
		want      bool
	}{
		{8 * mib, 64 * mib, false},    // under the slack, however large a share
		{32 * mib, 64 * mib, true},    // half the device
		{2 * gib, 1000 * gib, true},   // small share, large amount
		{600 * mib, 100 * gib, false}, // 0.6%, under 1 GiB
		{6 * gib, 100 * gib, true},
		{-gib, 10 * gib, false}, // larger than the device is not "not grown"
	} {
		if got := notGrown(c.gap, c.size); got != c.want {
			t.Errorf("notGrown(%d, %d) = %v", c.gap, c.size, got)
		}
	}
	if blockdev.IECBytes(1536) != "1.5 KiB" || blockdev.IECBytes(10) != "10 B" || blockdev.IECBytes(20<<30) != "20.0 GiB" {
		t.Error("iecBytes")
	}
}

// TestDiskSizeLoopNotGrown makes a GPT disk image whose first partition
// holds an ext4 filesystem half its size, mounts it, and expects the
// check to report the filesystem (and, where the kernel creates partition
// devices, the partition) as not grown.
func TestDiskSizeLoopNotGrown(t *testing.T) {
	blocktest.RequireRoot(t)
	blocktest.RequireTools(t, "losetup", "mount", "umount", "mkfs.ext4", "sfdisk")
	img := blocktest.Sparse(t, t.TempDir(), "disk.img", 96<<20)
	blocktest.RunInput(t, "label: gpt\nstart=2048, size=131072, name=\"gc-root\"\n", "sfdisk", "-q", img)
	want := "pass:disk-usage-ok warn:disk-fs-not-grown warn:disk-partition-not-grown"
	dev := blocktest.PartitionDevice(blocktest.AttachLoop(t, img, "-P"), 1)
	if dev == "" {
		// No partition devices from this kernel: expose the partition's
		// extent as its own loop device instead.
		t.Log("the kernel creates no loop partitions: testing the filesystem inside the partition's extent only")
		dev = blocktest.AttachLoop(t, img, "--offset", fmt.Sprint(2048*512), "--sizelimit", fmt.Sprint(131072*512))
		want = "pass:disk-usage-ok warn:disk-fs-not-grown"
	}
	blocktest.Mkfs(t, "ext4", dev, blocktest.RandomUUID(t), blocktest.RandomLabel(t, "gc-grow-"), "32M")
	dir := blocktest.Mount(t, dev, "ext4")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fs := Run(ctx, blockdevtest.HostEnv(t))
	checktest.Conventions(t, fs, Codes)
	got := diskByMount(fs)[dir]
	if c := blockdevtest.Codes(got); c != want {
		t.Fatalf("%s on %s: %s, want %s\n%+v", dir, dev, c, want, got)
	}
	for _, f := range got {
		switch f.Code {
		case codeDiskFSNotGrown.ID:
			if f.Detail["fs_size"] != "32.0 MiB" || f.Detail["device_size"] != "64.0 MiB" || f.Detail["device"] != dev ||
				!strings.Contains(f.Remediation, "resize2fs "+dev) {
				t.Errorf("not grown: %+v", f)
			}
		case codeDiskUsageOK.ID:
			if f.Detail["fs_size_bytes"] != fmt.Sprint(32<<20) || f.Detail["inodes_used_percent"] == "" {
				t.Errorf("usage: %+v", f)
			}
		}
	}
}
