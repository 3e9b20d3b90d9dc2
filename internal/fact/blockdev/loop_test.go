package blockdev

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
)

// loopImage is one filesystem made on a loop device by a root-only test.
type loopImage struct {
	typ, uuid, label, dev, file string
}

// makeLoop formats a sparse image with mkfs and attaches it.
func makeLoop(t *testing.T, dir, typ string, size int64, uuid, label, fsSize string) loopImage {
	t.Helper()
	file := blocktest.Sparse(t, dir, typ+".img", size)
	blocktest.Mkfs(t, typ, file, uuid, label, fsSize)
	return loopImage{typ: typ, uuid: uuid, label: label, file: file, dev: blocktest.AttachLoop(t, file)}
}

func probeFile(t *testing.T, p string) blockid.Superblock {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sb, err := blockid.Probe(f)
	if err != nil {
		t.Fatalf("Probe(%s): %v", p, err)
	}
	return sb
}

// TestLoopProbeMatchesBlkid formats a loop device with every supported
// filesystem and requires Probe to report exactly what blkid reports.
func TestLoopProbeMatchesBlkid(t *testing.T) {
	blocktest.RequireRoot(t)
	blocktest.RequireTools(t, "losetup", "blkid", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkswap")
	sizes := map[string]int64{"ext2": 16 << 20, "ext3": 16 << 20, "ext4": 32 << 20, "xfs": 300 << 20,
		"btrfs": 128 << 20, "vfat": 64 << 20, "vfat16": 16 << 20, "swap": 16 << 20}
	for _, typ := range []string{"ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "vfat16", "swap"} {
		t.Run(typ, func(t *testing.T) {
			uuid, label := blocktest.RandomUUID(t), blocktest.RandomLabel(t, "gc-"+typ[:3]+"-")
			if strings.HasPrefix(typ, "vfat") {
				uuid = strings.ToUpper(uuid[:4] + "-" + uuid[4:8])
				label = strings.ToUpper(strings.ReplaceAll(label, "-", ""))
			}
			img := makeLoop(t, t.TempDir(), typ, sizes[typ], uuid, label, "")
			want := blocktest.Blkid(t, img.dev)
			sb := probeFile(t, img.dev)
			if sb.Type != want["TYPE"] || sb.UUID != want["UUID"] || sb.Label != want["LABEL"] {
				t.Errorf("Probe(%s) = %+v; blkid: TYPE=%s UUID=%s LABEL=%s", img.dev, sb, want["TYPE"], want["UUID"], want["LABEL"])
			}
			if sb.UUID != uuid || sb.Label != label {
				t.Errorf("Probe = %+v, made with UUID %s label %s", sb, uuid, label)
			}
			if sb.Size <= 0 || sb.Size > sizes[typ] {
				t.Errorf("Size = %d for a %d-byte device", sb.Size, sizes[typ])
			}
			if f := probeFile(t, img.file); f != sb {
				t.Errorf("the image file probes as %+v, the loop device as %+v", f, sb)
			}
		})
	}
}

// TestLoopInventory attaches two ext4 images that share a UUID (a cloned
// disk) and an xfs image, then reads the real /sys and /dev.
func TestLoopInventory(t *testing.T) {
	blocktest.RequireRoot(t)
	blocktest.RequireTools(t, "losetup", "mkfs.ext4", "mkfs.xfs")
	shared := blocktest.RandomUUID(t)
	a := makeLoop(t, t.TempDir(), "ext4", 32<<20, shared, blocktest.RandomLabel(t, "gc-a-"), "")
	b := makeLoop(t, t.TempDir(), "ext4", 32<<20, shared, blocktest.RandomLabel(t, "gc-b-"), "16M")
	x := makeLoop(t, t.TempDir(), "xfs", 300<<20, blocktest.RandomUUID(t), blocktest.RandomLabel(t, "gc-x-"), "")

	root, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	inv, err := ReadInventory(context.Background(), root, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, img := range []loopImage{a, b, x} {
		d, err := inv.DeviceForPath(root, img.dev)
		if err != nil {
			t.Fatalf("DeviceForPath(%s): %v", img.dev, err)
		}
		if d.BackingFile != img.file || d.FS == nil || d.FS.UUID != img.uuid || d.FS.Label != img.label || d.ProbeNote != "" {
			t.Errorf("%s = %+v (fs %+v), want backing %s UUID %s label %s", img.dev, d, d.FS, img.file, img.uuid, img.label)
		}
		if id, ok := d.ID(fstab.IDUUID); !ok || id.Sources[0] != SourceSuperblock {
			t.Errorf("%s UUID source = %+v", img.dev, id)
		}
		if ms := inv.Lookup(fstab.IDLabel, img.label); len(ms) != 1 || ms[0].Device != d {
			t.Errorf("LABEL=%s resolves to %+v", img.label, ms)
		}
	}
	if ms := inv.Lookup(fstab.IDUUID, shared); len(ms) != 2 {
		t.Errorf("shared UUID resolves to %d devices, want 2", len(ms))
	}
	found := false
	for _, d := range inv.Duplicates() {
		if d.Kind == fstab.IDUUID && d.Value == shared {
			found = len(d.Devices) == 2
		}
		if d.Kind == fstab.IDUUID && d.Value == x.uuid {
			t.Errorf("xfs UUID reported as duplicate: %+v", d)
		}
	}
	if !found {
		t.Errorf("duplicate UUID %s not reported: %+v", shared, inv.Duplicates())
	}
	// The second ext4 filesystem was made smaller than its device.
	if d := inv.ByName(strings.TrimPrefix(b.dev, "/dev/")); d.FS.Size != 16<<20 || d.Size != 32<<20 {
		t.Errorf("fs size %d on a %d-byte device, want 16 MiB on 32 MiB", d.FS.Size, d.Size)
	}
}

// TestPartitionInventoryMatchesBlkid writes GPT and MBR tables with
// sfdisk and, as root, attaches the disk with partition scanning, when the
// kernel supports it, and reads PARTUUID and PARTLABEL through the
// inventory. (blockid's TestPartitionTableMatchesPartx compares the tables
// themselves with partx.)
func TestPartitionInventoryMatchesBlkid(t *testing.T) {
	blocktest.RequireTools(t, "sfdisk", "blkid")
	scripts := map[string]string{
		"gpt": "label: gpt\nstart=2048, size=8192, name=\"gc data\"\nstart=10240, size=4096\n",
		"dos": "label: dos\nstart=2048, size=8192, type=83\nstart=10240, size=20000, type=5\nstart=12288, size=2048, type=83\nstart=16384, size=2048, type=82\n",
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			img := blocktest.Sparse(t, t.TempDir(), name+".img", 32<<20)
			blocktest.RunInput(t, script, "sfdisk", "-q", img)
			if os.Geteuid() != 0 {
				return
			}
			dev := blocktest.AttachLoop(t, img, "-P")
			part := blocktest.PartitionDevice(dev, 1)
			if part == "" {
				t.Logf("kernel created no partitions for %s (no partition-table support); PARTUUID resolution is covered by the fake-root tests", dev)
				return
			}
			root, err := fs.Open("/")
			if err != nil {
				t.Fatal(err)
			}
			inv, err := ReadInventory(context.Background(), root, InventoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d, err := inv.DeviceForPath(root, part)
			if err != nil {
				t.Fatal(err)
			}
			want := blocktest.Blkid(t, part)
			if id, _ := d.ID(fstab.IDPartUUID); id.Value != want["PARTUUID"] {
				t.Errorf("PARTUUID of %s = %q, blkid %q", part, id.Value, want["PARTUUID"])
			}
			if id, _ := d.ID(fstab.IDPartLabel); id.Value != want["PARTLABEL"] {
				t.Errorf("PARTLABEL of %s = %q, blkid %q", part, id.Value, want["PARTLABEL"])
			}
		})
	}
}
