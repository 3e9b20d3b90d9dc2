package fs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestDirReadsBelow: a Dir reached through in-root symlinks (as
// /sys/class/block/<dev> is) reads plain names and subdirectories below it,
// names errors by guest path, and refuses every way out: "..", absolute
// names, and symlinks of any kind below it, in-root ones included.
func TestDirReadsBelow(t *testing.T) {
	dir, secret := tree(t)
	dev := filepath.Join(dir, "sys/devices/pci0/virtio1/block/vda")
	must(t, os.MkdirAll(filepath.Join(dev, "queue"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dev, "holders"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "sys/class/block"), 0o755))
	must(t, os.WriteFile(filepath.Join(dev, "size"), []byte("2048\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dev, "queue/logical_block_size"), []byte("512\n"), 0o644))
	must(t, os.Symlink("/sys/devices/pci0/virtio1/block/vda", filepath.Join(dir, "sys/class/block/vda")))
	must(t, os.Symlink("../../../../../../../..", filepath.Join(dir, "sys/class/block/up")))
	must(t, os.Symlink("size", filepath.Join(dev, "size-link")))     // in-root, still refused
	must(t, os.Symlink(secret, filepath.Join(dev, "escape")))        // host file
	must(t, os.Symlink("queue", filepath.Join(dev, "queue-link")))   // directory link
	must(t, os.Symlink("/dm-0", filepath.Join(dev, "holders/dm-0"))) // listed, not followed
	must(t, os.WriteFile(filepath.Join(dir, "sys/class/block/outside-attr"), []byte("x"), 0o644))

	r, err := Open(dir)
	must(t, err)
	defer r.Close()
	d, err := r.OpenDir("/sys/class/block/vda")
	must(t, err)
	defer d.Close()
	if d.Path() != "/sys/class/block/vda" {
		t.Errorf("Path() = %q", d.Path())
	}
	if b, err := d.ReadFile("size"); err != nil || string(b) != "2048\n" {
		t.Errorf("ReadFile(size) = %q, %v", b, err)
	}
	if b, err := d.ReadFile("queue/logical_block_size"); err != nil || string(b) != "512\n" {
		t.Errorf("ReadFile(queue/logical_block_size) = %q, %v", b, err)
	}
	names, err := d.ReadDirNames("holders")
	if err != nil || !reflect.DeepEqual(names, []string{"dm-0"}) {
		t.Errorf("ReadDirNames(holders) = %q, %v", names, err)
	}
	names, err = d.ReadDirNames(".")
	if want := []string{"escape", "holders", "queue", "queue-link", "size", "size-link"}; err != nil || !reflect.DeepEqual(names, want) {
		t.Errorf("ReadDirNames(.) = %q, %v, want %q", names, err, want)
	}
	if tg, err := d.Readlink("escape"); err != nil || tg != secret {
		t.Errorf("Readlink(escape) = %q, %v, want the target as stored", tg, err)
	}
	for _, name := range []string{"holders/dm-0", "queue-link/x", "..", ".", "", "/etc/abs-escape"} {
		if tg, err := d.Readlink(name); err == nil {
			t.Errorf("Readlink(%q) = %q, want refused (one entry of the directory only)", name, tg)
		}
	}
	if _, err := d.Readlink("size"); err == nil {
		t.Error("Readlink of a regular file succeeded")
	}
	_, err = d.ReadFile("missing")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing): %v, want not-exist", err)
	}
	if want := "open /sys/class/block/vda/missing:"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ReadFile(missing) error %v does not name %s", err, want)
	}
	for _, name := range []string{"size-link", "escape", "queue-link/logical_block_size", "../outside-attr", "queue/../../outside-attr", "/etc/hostname", secret, "", "."} {
		b, err := d.ReadFile(name)
		if err == nil {
			t.Errorf("ReadFile(%q) = %q, want refused", name, b)
		}
		if bytes.Contains(b, []byte("host secret")) {
			t.Errorf("ReadFile(%q) read the host file", name)
		}
	}
	for _, name := range []string{"queue-link", "..", "/"} {
		if names, err := d.ReadDirNames(name); err == nil {
			t.Errorf("ReadDirNames(%q) = %q, want refused", name, names)
		}
	}

	// The directory itself resolves inside the root like any guest path:
	// a climbing link stays at the image's "/".
	up, err := r.OpenDir("/sys/class/block/up")
	must(t, err)
	defer up.Close()
	if b, err := up.ReadFile("etc/hostname"); err != nil || string(b) != "vm1\n" {
		t.Errorf("via a climbing link: ReadFile(etc/hostname) = %q, %v, want the image's", b, err)
	}
	if _, err := r.OpenDir("/etc/hostname"); err == nil {
		t.Error("OpenDir of a file succeeded")
	}
	if _, err := r.OpenDir("/etc/abs-escape"); err == nil {
		t.Error("OpenDir of a link to a host file succeeded")
	}

	must(t, d.Close())
	must(t, d.Close())
	if _, err := d.ReadFile("size"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadFile after Close: %v, want ErrClosed", err)
	}
	if _, err := d.Readlink("escape"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Readlink after Close: %v, want ErrClosed", err)
	}
}

// TestDirReadFileLimit: a Dir's reads have the root's bound.
func TestDirReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("x"), 9000), 0o644))
	r, err := Open(dir)
	must(t, err)
	defer r.Close()
	r.limit = 8192
	d, err := r.OpenDir("/")
	must(t, err)
	defer d.Close()
	if _, err := d.ReadFile("big"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(big): %v, want ErrTooLarge", err)
	}
	r.limit = 9000
	if b, err := d.ReadFile("big"); err != nil || len(b) != 9000 {
		t.Errorf("ReadFile(big) at the limit: %d bytes, %v", len(b), err)
	}
}

// TestDirHostRoot: on the running system a Dir reads real sysfs attributes.
func TestDirHostRoot(t *testing.T) {
	r, err := Open("/")
	must(t, err)
	defer r.Close()
	d, err := r.OpenDir("/proc/self")
	must(t, err)
	defer d.Close()
	b, err := d.ReadFile("status")
	if err != nil || !bytes.HasPrefix(b, []byte("Name:")) {
		t.Errorf("ReadFile(/proc/self/status) = %.40q, %v", b, err)
	}
}
