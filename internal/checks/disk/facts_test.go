package disk

import (
	"context"
	"errors"
	iofs "io/fs"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// factsInventory builds an inventory from devices, as ReadInventory
// would leave it, without a filesystem.
func factsInventory(udev bool, devs ...*BlockDevice) *Inventory {
	inv := &Inventory{Devices: devs, UdevLinks: udev, byName: map[string]*BlockDevice{}}
	for _, d := range devs {
		inv.byName[d.Name] = d
	}
	return inv
}

// factsDev is a probed ext4 device with a filesystem UUID.
func factsDev(name, parent string, part int, minor uint32, uuid string) *BlockDevice {
	return &BlockDevice{Name: name, Parent: parent, Partition: part, Major: 254, Minor: minor, Size: 1 << 30, Probed: true,
		FS:  &blockid.Superblock{Type: "ext4", UUID: uuid, Size: 1 << 30},
		IDs: []Identifier{{Kind: fstab.IDUUID, Value: uuid, Sources: []string{SourceSuperblock}}}}
}

// liveFacts are the facts of a VM with its root on vda1 and a data disk
// vdb, both mounted, for an fstab of content.
func liveFacts(t *testing.T, content string) FstabFacts {
	t.Helper()
	vda, vda1 := &BlockDevice{Name: "vda", Major: 254, Size: 8 << 30}, factsDev("vda1", "vda", 1, 1, tRootUUID)
	vdb := factsDev("vdb", "", 0, 16, tDataUUID)
	ms, errs := mountinfo.Parse([]byte("1 0 254:1 / / rw - ext4 /dev/vda1 rw\n2 1 254:16 / /data rw - ext4 /dev/vdb rw\n"))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f := FstabFacts{File: "/etc/fstab", Data: []byte(content), Live: true, IsRoot: true, Mounts: ms, SwapsOK: true,
		Inventory: factsInventory(true, vda, vda1, vdb),
		Paths:     map[string]PathDevice{"/dev/vdb": {Device: vdb}, "/dev/vda1": {Device: vda1}}, Missing: map[string]bool{}}
	f.Entries, f.Problems = fstab.Parse(f.Data)
	return f
}

// TestJudgeFstabOnFacts judges hand-made facts: no root, no /sys, no
// /dev, so every finding follows from the value alone.
func TestJudgeFstabOnFacts(t *testing.T) {
	root := "UUID=" + tRootUUID + " / ext4 defaults 0 1\n"
	for _, c := range []struct {
		name, fstab string
		edit        func(*FstabFacts)
		want        map[string]string // line -> codes
	}{
		{"persistent names pass", root + "UUID=" + tDataUUID + " /data ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "pass:fstab-entry-ok"}},
		{"data disk without nofail", root + "UUID=" + tDataUUID + " /data ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-data-without-nofail"}},
		{"kernel name of a data disk", root + "/dev/vdb /data ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-kernel-device-name"}},
		{"kernel name of the root disk", "/dev/vda1 / ext4 defaults 0 1\n", nil,
			map[string]string{"1": "fail:fstab-kernel-device-name"}},
		{"unknown UUID", root + "UUID=0a1b2c3d-0000-4000-8000-0000000000ff /srv ext4 defaults 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-device-missing warn:fstab-data-without-nofail"}},
		{"path not gathered does not exist", root + "/dev/mapper/gone /srv ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-device-missing"}},
		{"missing swap file", root + "/swapfile none swap sw 0 0\n", func(f *FstabFacts) { f.Missing["/swapfile"] = true },
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-device-missing"}},
		{"swap not active", root + "/swapfile none swap sw 0 0\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-not-mounted"}},
		{"not mounted", root + "UUID=" + tDataUUID + " /srv ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "warn:fstab-not-mounted"}},
		{"syntax and mount point", root + "garbage\n/dev/vdb data ext4 defaults,nofail 0 2\n", nil,
			map[string]string{"1": "pass:fstab-entry-ok", "2": "fail:fstab-syntax-error", "3": "fail:fstab-mount-point-invalid"}},
		{"not live", "/dev/vdb /data ext4 defaults 0 2\n", func(f *FstabFacts) {
			*f = FstabFacts{File: f.File, Data: f.Data, Entries: f.Entries, NotLiveReason: "needs the running system"}
		}, map[string]string{"": "skip:fstab-not-live", "1": "fail:fstab-kernel-device-name"}},
		{"deadline", root + "UUID=" + tDataUUID + " /data ext4 defaults,nofail 0 2\n", func(f *FstabFacts) {
			f.Deadline, f.Cut = context.DeadlineExceeded, 1
		}, map[string]string{"1": "pass:fstab-entry-ok", "": "error:fstab-state-unreadable"}},
		{"inventory unreadable", root, func(f *FstabFacts) { f.Inventory, f.InventoryErr = nil, errors.New("no /sys") },
			map[string]string{"": "error:fstab-state-unreadable", "1": "pass:fstab-entry-ok"}},
		{"absent", "", func(f *FstabFacts) {
			f.ReadErr = &iofs.PathError{Op: "open", Path: "/etc/fstab", Err: iofs.ErrNotExist}
		}, map[string]string{"": "skip:fstab-absent"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := liveFacts(t, c.fstab)
			if c.edit != nil {
				c.edit(&f)
			}
			fs := JudgeFstab(f)
			diskConventions(t, FstabCodes, fs)
			wantGroups(t, fstabByLine(fs), c.want)
		})
	}
}

// TestJudgeDiskSizeOnFacts judges hand-made disk-size facts: a root that
// fills its partition but not its disk, a data filesystem that does not
// fill its device, a full one, and one statfs cannot answer.
func TestJudgeDiskSizeOnFacts(t *testing.T) {
	vda := &BlockDevice{Name: "vda", Major: 254, Size: 20 << 30}
	vda1 := factsDev("vda1", "vda", 1, 1, tRootUUID)
	vdb := factsDev("vdb", "", 0, 16, tDataUUID)
	vdb.Size = 4 << 30 // the filesystem spans 1 GiB of it
	mount := func(line string) mountinfo.Mount {
		ms, errs := mountinfo.Parse([]byte(line))
		if len(ms) != 1 {
			t.Fatal(errs)
		}
		return ms[0]
	}
	use := func(pct uint64) Usage {
		return Usage{BlockSize: 4096, Blocks: 1000, Free: 1000 - pct*10, Avail: 1000 - pct*10, Files: 100, FilesFree: 90}
	}
	f := DiskSizeFacts{Live: true, WarnPercent: 85, FailPercent: 95, Inventory: factsInventory(true, vda, vda1, vdb),
		Filesystems: []FilesystemFacts{
			{Mount: mount("1 0 254:1 / / rw - ext4 /dev/vda1 rw"), Device: vda1, Usage: use(40)},
			{Mount: mount("2 1 254:16 / /data rw - ext4 /dev/vdb rw"), Device: vdb, Usage: use(97)},
			{Mount: mount("3 1 0:40 / /nfs rw - ext4 /dev/vdc rw"), StatErr: errors.New("stale handle")},
		}}
	vda1.Start, vda1.Size = 1<<20, 1<<30
	fs := JudgeDiskSize(f)
	diskConventions(t, DiskSizeCodes, fs)
	wantGroups(t, diskByMount(fs), map[string]string{
		"/":     "pass:disk-usage-ok warn:disk-partition-not-grown",
		"/data": "fail:disk-usage-critical warn:disk-fs-not-grown",
		"/nfs":  "error:disk-statfs-failed",
	})

	f.Deadline = context.DeadlineExceeded
	f.Filesystems = nil
	if c := diskCodes(JudgeDiskSize(f)); c != "error:disk-state-unreadable" {
		t.Errorf("past the deadline: %s", c)
	}
	if c := diskCodes(JudgeDiskSize(DiskSizeFacts{NotLiveReason: "--root"})); c != "skip:disk-not-live" {
		t.Errorf("not live: %s", c)
	}
	if c := diskCodes(JudgeDiskSize(DiskSizeFacts{Live: true})); c != "skip:disk-size-unverified" {
		t.Errorf("nothing mounted: %s", c)
	}
}
