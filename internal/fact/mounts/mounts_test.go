package mounts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
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
