package blockdev

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

const (
	rootUUID  = "0a1b2c3d-0000-4000-8000-00000000000a"
	dataUUID  = "0a1b2c3d-0000-4000-8000-00000000000d"
	mdUUID    = "0a1b2c3d-0000-4000-8000-0000000000dd"
	cryptFS   = "0a1b2c3d-0000-4000-8000-0000000000cf"
	luksUUID  = "0a1b2c3d-0000-4000-8000-0000000000c1"
	staleUUID = "0a1b2c3d-0000-4000-8000-0000000000ff"
	rootPart  = "6f5e4d3c-2b1a-4098-8765-43210fedcba9"
	espPart   = "11111111-2222-4333-8444-555555555555"
	linuxType = "0fc63daf-8483-4772-8e79-3d69d8477de4"
	espType   = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
)

// fakeCloudVM builds the block devices of a typical cloud VM, with the
// traps the inventory must handle: a cloned data disk, an md mirror whose
// members show the array's filesystem, a dm-crypt device over a LUKS disk,
// a stale udev link and an empty loop device.
func fakeCloudVM(t *testing.T) *blocktest.System {
	s := blocktest.NewSystem(t)
	gpt := blocktest.GPT{DiskGUID: "01234567-89ab-cdef-0123-456789abcdef", Parts: []blocktest.GPTPart{
		{Type: linuxType, UUID: rootPart, Name: "cloudimg-rootfs", First: 227328, Last: 4194270},
		{Type: espType, UUID: espPart, Name: "EFI System", First: 2048, Last: 227327},
	}}
	const gib = 1 << 30
	s.Add(blocktest.Device{Name: "vda", Major: 254, Minor: 0, Size: 20 * gib, Image: gpt.Image()})
	s.Add(blocktest.Device{Name: "vda1", Major: 254, Minor: 1, Parent: "vda", Partition: 1, Start: 227328 * 512, Size: (4194270 - 227328 + 1) * 512,
		Image: blocktest.Ext{Type: "ext4", UUID: rootUUID, Label: "cloudimg-rootfs", Blocks: 495368, LogBlockSize: 2}.Image()})
	s.Add(blocktest.Device{Name: "vda2", Major: 254, Minor: 2, Parent: "vda", Partition: 2, Start: 2048 * 512, Size: 225280 * 512,
		Image: blocktest.FAT{Bits: 16, Serial: 0x5D3B6F4A, Label: "UEFI"}.Image()})
	data := blocktest.XFS{UUID: dataUUID, Label: "data", BlockSize: 4096, Blocks: 262144}.Image()
	s.Add(blocktest.Device{Name: "vdb", Major: 254, Minor: 16, Size: gib, Image: data})
	s.Add(blocktest.Device{Name: "vdc", Major: 254, Minor: 32, Size: gib, Image: data}) // the restored clone
	md := blocktest.Ext{Type: "ext4", UUID: mdUUID, Blocks: 1000, LogBlockSize: 2}.Image()
	s.Add(blocktest.Device{Name: "vdf", Major: 254, Minor: 80, Size: gib, Image: md, Holders: []string{"md0"}})
	s.Add(blocktest.Device{Name: "vdg", Major: 254, Minor: 96, Size: gib, Image: md, Holders: []string{"md0"}})
	s.Add(blocktest.Device{Name: "md0", Major: 9, Minor: 0, Size: gib, Image: md, Slaves: []string{"vdf", "vdg"}})
	s.Add(blocktest.Device{Name: "vde", Major: 254, Minor: 64, Size: gib, Image: make([]byte, 4096), Holders: []string{"dm-0"}})
	s.Add(blocktest.Device{Name: "dm-0", Major: 253, Minor: 0, Size: gib - 16<<20, DMName: "cryptdata", Slaves: []string{"vde"},
		Image: blocktest.Ext{Type: "ext4", UUID: cryptFS, Blocks: 1000}.Image()})
	mbr := blocktest.MBR{Signature: 0x5eed1e55, Primary: [4]blocktest.MBRPart{{Type: 0x83, Start: 2048, Sectors: 20480}}}
	s.Add(blocktest.Device{Name: "vdm", Major: 254, Minor: 192, Size: 16 << 20, Image: mbr.Image()})
	s.Add(blocktest.Device{Name: "vdm1", Major: 254, Minor: 193, Parent: "vdm", Partition: 1, Start: 2048 * 512, Size: 20480 * 512,
		Image: make([]byte, 4096)})
	s.Add(blocktest.Device{Name: "loop0", Major: 7, Minor: 0, Size: 0})
	s.Add(blocktest.Device{Name: "vdh", Major: 254, Minor: 112, Size: gib, NoNode: true})
	s.Symlink("../dm-0", "dev/mapper/cryptdata")
	s.Link("by-uuid", rootUUID, "vda1")
	s.Link("by-uuid", luksUUID, "vde")  // LUKS: a type the probe does not read
	s.Link("by-uuid", staleUUID, "vdb") // left over from a previous mkfs
	s.Link("by-label", "cloudimg-rootfs", "vda1")
	s.Link("by-partuuid", rootPart, "vda1")
	s.Link("by-partlabel", `EFI\x20System`, "vda2")
	s.Link("by-id", "virtio-data01", "vdb")
	return s
}

func openFake(t *testing.T, s *blocktest.System) *fs.Root {
	r, err := fs.Open(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestReadInventory(t *testing.T) {
	s := fakeCloudVM(t)
	r := openFake(t, s)
	inv, err := ReadInventory(context.Background(), r, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != 14 || !inv.UdevLinks {
		t.Fatalf("%d devices, udev links %v", len(inv.Devices), inv.UdevLinks)
	}
	vda1 := inv.ByName("vda1")
	if vda1 == nil || vda1.Parent != "vda" || vda1.Partition != 1 || vda1.Start != 227328*512 || vda1.Major != 254 || vda1.Minor != 1 {
		t.Fatalf("vda1 = %+v", vda1)
	}
	if vda1.FS == nil || vda1.FS.Type != "ext4" || vda1.FS.Size != 495368*4096 {
		t.Errorf("vda1 superblock = %+v", vda1.FS)
	}
	wantIDs := []Identifier{
		{Kind: fstab.IDUUID, Value: rootUUID, Sources: []string{SourceSuperblock, "/dev/disk/by-uuid"}},
		{Kind: fstab.IDLabel, Value: "cloudimg-rootfs", Sources: []string{SourceSuperblock, "/dev/disk/by-label"}},
		{Kind: fstab.IDPartUUID, Value: rootPart, Sources: []string{SourceGPT, "/dev/disk/by-partuuid"}},
		{Kind: fstab.IDPartLabel, Value: "cloudimg-rootfs", Sources: []string{SourceGPT}},
	}
	if !reflect.DeepEqual(vda1.IDs, wantIDs) {
		t.Errorf("vda1 IDs:\n got %+v\nwant %+v", vda1.IDs, wantIDs)
	}
	if id, ok := inv.ByName("vda2").ID(fstab.IDPartLabel); !ok || id.Value != "EFI System" || len(id.Sources) != 2 {
		t.Errorf("vda2 PARTLABEL = %+v (the udev link name is \\x20-escaped)", id)
	}
	if id, ok := inv.ByName("vdm1").ID(fstab.IDPartUUID); !ok || id.Value != "5eed1e55-01" || !reflect.DeepEqual(id.Sources, []string{SourceMBR}) {
		t.Errorf("vdm1 PARTUUID from the MBR = %+v", id)
	}
	if _, ok := inv.ByName("vdm1").ID(fstab.IDPartLabel); ok {
		t.Error("MBR partitions have no PARTLABEL")
	}
	if id, ok := inv.ByName("vde").ID(fstab.IDUUID); !ok || id.Value != luksUUID || !reflect.DeepEqual(id.Sources, []string{"/dev/disk/by-uuid"}) {
		t.Errorf("vde UUID from its udev link = %+v", id)
	}
	if len(inv.Conflicts) != 1 || !strings.Contains(inv.Conflicts[0], staleUUID) || !strings.Contains(inv.Conflicts[0], dataUUID) {
		t.Errorf("conflicts = %q", inv.Conflicts)
	}
	if _, ok := inv.ByName("vdb").ID(fstab.IDUUID); !ok {
		t.Error("vdb lost its probed UUID")
	}
	if d := inv.ByName("vdb"); !reflect.DeepEqual(d.Links, []string{"/dev/disk/by-uuid/" + staleUUID, "/dev/disk/by-id/virtio-data01"}) {
		t.Errorf("vdb links = %q", d.Links)
	}
	if n := inv.ByName("loop0").ProbeNote; !strings.Contains(n, "size 0") {
		t.Errorf("loop0 note = %q", n)
	}
	if n := inv.ByName("vdh").ProbeNote; !strings.Contains(n, "no such file") {
		t.Errorf("vdh (no node) note = %q", n)
	}
	if inv.ByName("vda").FS != nil || !inv.ByName("vda").Probed {
		t.Error("a GPT disk is probed and has no filesystem")
	}
	if u := inv.Unread(); !reflect.DeepEqual(u, []string{"vdh"}) {
		t.Errorf("Unread = %q, want vdh (no device node)", u)
	}

	// Lookups: the clone is ambiguous, the md mirror and dm-crypt are not.
	if ms := inv.Lookup(fstab.IDUUID, dataUUID); len(ms) != 2 {
		t.Errorf("data UUID matches %d devices, want 2 (vdb and its clone)", len(ms))
	}
	if ms := inv.Lookup(fstab.IDUUID, mdUUID); len(ms) != 1 || ms[0].Device.Name != "md0" {
		t.Errorf("md UUID = %+v, want md0 only", ms)
	}
	if ms := inv.Lookup(fstab.IDPartUUID, rootPart); len(ms) != 1 || ms[0].Device.Name != "vda1" {
		t.Errorf("PARTUUID lookup = %+v", ms)
	}
	if ms := inv.LookupFold(fstab.IDUUID, strings.ToUpper(rootUUID)); len(ms) != 1 {
		t.Errorf("LookupFold = %+v", ms)
	}
	if ms := inv.Lookup(fstab.IDUUID, strings.ToUpper(rootUUID)); len(ms) != 0 {
		t.Errorf("Lookup must be exact: %+v", ms)
	}

	var dups []string
	for _, d := range inv.Duplicates() {
		var names []string
		for _, x := range d.Devices {
			names = append(names, x.Name)
		}
		dups = append(dups, string(d.Kind)+"="+d.Value+":"+strings.Join(names, ","))
	}
	want := []string{"UUID=" + dataUUID + ":vdb,vdc", "LABEL=data:vdb,vdc"}
	if !reflect.DeepEqual(dups, want) {
		t.Errorf("Duplicates = %q, want %q", dups, want)
	}

	for p, name := range map[string]string{"/dev/vdb": "vdb", "/dev/disk/by-id/virtio-data01": "vdb", "/dev/mapper/cryptdata": "dm-0",
		"/dev/disk/by-uuid/" + rootUUID: "vda1"} {
		d, err := inv.DeviceForPath(r, p)
		if err != nil || d.Name != name {
			t.Errorf("DeviceForPath(%s) = %v, %v; want %s", p, d, err, name)
		}
	}
	if _, err := inv.DeviceForPath(r, "/dev/vdz"); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("DeviceForPath(missing) = %v", err)
	}
	s.WriteFile("etc/notadev", "x")
	if _, err := inv.DeviceForPath(r, "/etc/notadev"); !errors.Is(err, ErrNotBlockDevice) {
		t.Errorf("DeviceForPath(/etc/notadev) = %v", err)
	}

	if free, ok := inv.FreeAfter(vda1); !ok || free != 20<<30-4194271*512 {
		t.Errorf("FreeAfter(vda1) = %d, %v", free, ok)
	}
	if free, ok := inv.FreeAfter(inv.ByName("vda2")); !ok || free != 0 {
		t.Errorf("FreeAfter(vda2) = %d, %v (vda1 follows it)", free, ok)
	}
	if _, ok := inv.FreeAfter(inv.ByName("vdb")); ok {
		t.Error("FreeAfter of a whole disk")
	}
	if inv.Disk(vda1).Name != "vda" || inv.Disk(inv.ByName("vdb")).Name != "vdb" {
		t.Error("Disk")
	}
	names := func(ds []*BlockDevice) string {
		var n []string
		for _, d := range ds {
			n = append(n, d.Name)
		}
		return strings.Join(n, ",")
	}
	for dev, want := range map[string]string{"vda1": "vda", "md0": "vdf,vdg", "dm-0": "vde", "vdb": "vdb"} {
		if got := names(inv.BaseDisks(inv.ByName(dev))); got != want {
			t.Errorf("BaseDisks(%s) = %s, want %s", dev, got, want)
		}
	}
}

func TestReadInventoryDeadline(t *testing.T) {
	r := openFake(t, fakeCloudVM(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inv, err := ReadInventory(ctx, r, InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != 14 || len(inv.Notes) == 0 || inv.ByName("vdb").FS != nil || !strings.Contains(inv.ByName("vdb").ProbeNote, "deadline") {
		t.Errorf("after the deadline: %d devices, notes %q, vdb %+v", len(inv.Devices), inv.Notes, inv.ByName("vdb"))
	}
	if u := inv.Unread(); len(u) != 13 {
		t.Errorf("after the deadline every sized device is unread: %q", u)
	}
	// Without probing, identifiers still come from udev links.
	inv, err = ReadInventory(context.Background(), r, InventoryOptions{NoProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	if ms := inv.Lookup(fstab.IDUUID, staleUUID); len(ms) != 1 {
		t.Errorf("unprobed: the udev link is all there is: %+v", ms)
	}
}

func TestReadInventoryNoSysfs(t *testing.T) {
	r := openFake(t, &blocktest.System{Dir: t.TempDir()})
	if _, err := ReadInventory(context.Background(), r, InventoryOptions{}); err == nil {
		t.Error("no /sys/class/block must be an error")
	}
}

// TestReadInventoryDenied runs unprivileged only: root opens any file, so
// the permission error cannot be produced as root. CI's unprivileged pass
// and `go test` as a normal user cover it.
func TestReadInventoryDenied(t *testing.T) {
	testenv.RequireUnprivileged(t, "root bypasses file permissions")
	s := fakeCloudVM(t)
	if err := os.Chmod(filepath.Join(s.Dir, "dev", "vdb"), 0); err != nil {
		t.Fatal(err)
	}
	inv, err := ReadInventory(context.Background(), openFake(t, s), InventoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(inv.Denied, []string{"vdb"}) || !strings.Contains(inv.ByName("vdb").ProbeNote, "permission denied") {
		t.Errorf("denied = %q, note %q", inv.Denied, inv.ByName("vdb").ProbeNote)
	}
	// The stale link is now the only view of vdb, and is taken at its word.
	if ms := inv.Lookup(fstab.IDUUID, staleUUID); len(ms) != 1 || ms[0].Device.Name != "vdb" {
		t.Errorf("by-uuid fallback = %+v", ms)
	}
}
