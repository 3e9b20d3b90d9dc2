package blockdev

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestReadSysBlockFollowsNoLinkBelow: the device's sysfs entry is reached
// through its /sys/class/block symlink, but nothing below it is: kernel
// attributes are never symlinks, so one that is (an image or a fake root)
// is not read, wherever it points. Today's main followed them.
func TestReadSysBlockFollowsNoLinkBelow(t *testing.T) {
	s := blocktest.NewSystem(t)
	s.Add(blocktest.Device{Name: "vda", Major: 254, Minor: 0, Size: 1 << 30, Image: make([]byte, 4096)})
	s.Add(blocktest.Device{Name: "vdb", Major: 254, Minor: 16, Size: 1 << 20, Image: make([]byte, 4096), Holders: []string{"dm-0"}})
	dev := filepath.Join(s.Dir, "sys/devices/virtual/block/vda")
	s.WriteFile("etc/fake-size", "999\n")
	for _, attr := range []string{"size", "ro"} {
		if err := os.Remove(filepath.Join(dev, attr)); err != nil {
			t.Fatal(err)
		}
	}
	s.Symlink("/etc/fake-size", "sys/devices/virtual/block/vda/size")
	s.Symlink("../vdb/ro", "sys/devices/virtual/block/vda/ro")
	s.WriteFile("sys/devices/virtual/block/vdb/ro", "1")
	if err := os.RemoveAll(filepath.Join(dev, "holders")); err != nil {
		t.Fatal(err)
	}
	s.Symlink("../vdb/holders", "sys/devices/virtual/block/vda/holders")

	inv, err := ReadInventory(context.Background(), openFake(t, s), InventoryOptions{NoProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	vda := inv.ByName("vda")
	if vda == nil {
		t.Fatalf("no vda in %+v", inv.Devices)
	}
	if vda.Size != 0 || vda.ReadOnly || vda.Holders != nil {
		t.Errorf("vda read through symlinks below its sysfs directory: size %d, ro %v, holders %q", vda.Size, vda.ReadOnly, vda.Holders)
	}
	if vdb := inv.ByName("vdb"); vdb == nil || vdb.Size != 1<<20 || !vdb.ReadOnly || !reflect.DeepEqual(vdb.Holders, []string{"dm-0"}) {
		t.Errorf("vdb = %+v", vdb)
	}
}

// TestReadInventoryMatchesLsblk: on the running system, the sysfs fields
// agree with util-linux lsblk, which reads the same attributes its own way.
func TestReadInventoryMatchesLsblk(t *testing.T) {
	lsblk := testenv.Tool(t, "lsblk", "util-linux")
	out, err := exec.Command(lsblk, "-J", "-b", "-l", "-a", "-o", "NAME,MAJ:MIN,SIZE,RO,RM,PKNAME").Output()
	if err != nil {
		t.Fatalf("lsblk: %v", err)
	}
	var got struct {
		Blockdevices []struct {
			Name   string          `json:"name"`
			MajMin string          `json:"maj:min"`
			Size   int64           `json:"size"`
			RO     json.RawMessage `json:"ro"`
			RM     json.RawMessage `json:"rm"`
			PKName *string         `json:"pkname"`
		} `json:"blockdevices"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lsblk -J: %v", err)
	}
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	inv, err := ReadInventory(context.Background(), r, InventoryOptions{NoProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	flag := func(m json.RawMessage) bool { s := strings.Trim(string(m), `"`); return s == "true" || s == "1" }
	for _, l := range got.Blockdevices {
		d := inv.ByName(l.Name)
		if d == nil {
			t.Errorf("lsblk lists %s, the inventory does not", l.Name)
			continue
		}
		if mm := strings.TrimSpace(l.MajMin); mm != strings.Join([]string{itoa(d.Major), itoa(d.Minor)}, ":") {
			t.Errorf("%s: lsblk %s, inventory %d:%d", l.Name, mm, d.Major, d.Minor)
		}
		if l.Size != d.Size {
			t.Errorf("%s: lsblk size %d, inventory %d", l.Name, l.Size, d.Size)
		}
		if flag(l.RO) != d.ReadOnly {
			t.Errorf("%s: lsblk ro %s, inventory %v", l.Name, l.RO, d.ReadOnly)
		}
		if flag(l.RM) != d.Removable {
			t.Errorf("%s: lsblk rm %s, inventory %v", l.Name, l.RM, d.Removable)
		}
		if d.Partition > 0 && (l.PKName == nil || *l.PKName != d.Parent) {
			t.Errorf("%s: lsblk pkname %v, inventory parent %q", l.Name, l.PKName, d.Parent)
		}
	}
	t.Logf("%d devices compared with lsblk", len(got.Blockdevices))
}

func itoa(u uint32) string { return strconv.FormatUint(uint64(u), 10) }

// BenchmarkReadInventoryLive reads the running system's inventory, as
// disk-size and fstab do once per run.
func BenchmarkReadInventoryLive(b *testing.B) {
	r, err := fs.Open("/")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for b.Loop() {
		if _, err := ReadInventory(context.Background(), r, InventoryOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
