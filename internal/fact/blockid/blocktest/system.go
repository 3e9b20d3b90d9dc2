package blocktest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"
)

// System is a fake guest root with the parts of /sys, /dev and /proc the
// disk checks read. Device nodes are regular files holding the device's
// first bytes, which fs.ReadInventory accepts under an image root.
type System struct {
	// Dir is the host path of the root.
	Dir string
	t   testing.TB
}

// NewSystem creates an empty fake root in a temporary directory.
func NewSystem(t testing.TB) *System {
	t.Helper()
	s := &System{Dir: t.TempDir(), t: t}
	for _, d := range []string{"sys/class/block", "sys/devices/virtual/block", "dev", "proc/self", "etc"} {
		s.mkdir(d)
	}
	return s
}

func (s *System) mkdir(p string) {
	s.t.Helper()
	if err := os.MkdirAll(filepath.Join(s.Dir, p), 0o755); err != nil {
		s.t.Fatal(err)
	}
}

// WriteFile writes guest path p.
func (s *System) WriteFile(p, content string) {
	s.t.Helper()
	s.mkdir(path.Dir(p))
	if err := os.WriteFile(filepath.Join(s.Dir, p), []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// Symlink creates guest path p pointing at target (kept as written).
func (s *System) Symlink(target, p string) {
	s.t.Helper()
	s.mkdir(path.Dir(p))
	if err := os.Symlink(target, filepath.Join(s.Dir, p)); err != nil {
		s.t.Fatal(err)
	}
}

// Device describes one block device of the fake system.
type Device struct {
	Name         string
	Major, Minor uint32
	Size         int64 // bytes
	// Image is written at /dev/<Name> (it may be shorter than Size).
	Image []byte
	// Parent and Partition make a partition of disk Parent; Start is its
	// offset in bytes.
	Parent    string
	Partition int
	Start     int64
	Removable bool
	DMName    string
	Backing   string   // loop backing file
	Holders   []string // devices stacked on this one
	Slaves    []string // devices this one is stacked on
	NoNode    bool     // leave /dev/<Name> absent
}

// Add creates the sysfs entry (linked the way the kernel links it, so that
// a partition's parent is the directory above it) and the /dev node.
func (s *System) Add(d Device) {
	s.t.Helper()
	devDir := "sys/devices/virtual/block/" + d.Name
	if d.Parent != "" {
		devDir = "sys/devices/virtual/block/" + d.Parent + "/" + d.Name
	}
	s.mkdir(devDir)
	rel, err := filepath.Rel(filepath.Join(s.Dir, "sys/class/block"), filepath.Join(s.Dir, devDir))
	if err != nil {
		s.t.Fatal(err)
	}
	s.Symlink(rel, "sys/class/block/"+d.Name)
	w := func(name, v string) { s.WriteFile(devDir+"/"+name, v+"\n") }
	w("dev", fmt.Sprintf("%d:%d", d.Major, d.Minor))
	w("size", fmt.Sprint(d.Size/512))
	w("ro", "0")
	if d.Partition > 0 {
		w("partition", fmt.Sprint(d.Partition))
		w("start", fmt.Sprint(d.Start/512))
	} else {
		w("removable", map[bool]string{true: "1", false: "0"}[d.Removable])
		w("queue/logical_block_size", "512")
	}
	if d.DMName != "" {
		w("dm/name", d.DMName)
	}
	if d.Backing != "" {
		w("loop/backing_file", d.Backing)
	}
	s.mkdir(devDir + "/holders")
	s.mkdir(devDir + "/slaves")
	for _, h := range d.Holders {
		s.Symlink("../../"+h, devDir+"/holders/"+h)
	}
	for _, sl := range d.Slaves {
		s.Symlink("../../"+sl, devDir+"/slaves/"+sl)
	}
	if !d.NoNode {
		if err := os.WriteFile(filepath.Join(s.Dir, "dev", d.Name), d.Image, 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// Link creates /dev/disk/<dir>/<name> -> ../../<device>, as udev does.
func (s *System) Link(dir, name, device string) {
	s.t.Helper()
	s.Symlink("../../"+device, "dev/disk/"+dir+"/"+name)
}
