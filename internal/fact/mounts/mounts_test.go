package mounts

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n"
	if err := os.WriteFile(filepath.Join(dir, "proc/self/mountinfo"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ms, err := Read(r)
	if err != nil || len(ms) != 1 || ms[0].MountPoint != "/" || ms[0].FSType != "ext4" {
		t.Fatalf("Read = %+v, %v", ms, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/self/mountinfo"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(r); err == nil {
		t.Fatal("a table that does not parse read without an error")
	}
}

// TestReadersAgree: sealprep's Confined and guestcheck's Root read the
// same table from the same tree.
func TestReadersAgree(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	table := "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw\n23 22 0:5 / /dev rw - devtmpfs udev rw,size=1k\n"
	if err := os.WriteFile(filepath.Join(dir, "proc/self/mountinfo"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, aerr := Read(r)
	b, berr := Read(c)
	if aerr != nil || berr != nil || len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Errorf("Root read %+v, %v\nConfined read %+v, %v", a, aerr, b, berr)
	}
}

// TestTableOncePerRun: the checks of one run share the table first read;
// without a store each call reads.
func TestTableOncePerRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "proc/self/mountinfo"), []byte("22 1 8:1 / / rw - ext4 /dev/vda1 rw\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := store.New()
	a, _ := Table(s, r)
	b, _ := Table(s, r)
	if &a[0] != &b[0] {
		t.Error("a second check of the run read the table again")
	}
	if c, _ := Table(nil, r); &c[0] == &a[0] {
		t.Error("without a store the table was not read again")
	}
}
