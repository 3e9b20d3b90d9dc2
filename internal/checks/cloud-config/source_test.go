package cloudconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestRootSource runs the check through fs.Root on a directory tree, as
// --root does: owners come from the inode, the instance link resolves
// inside the root.
func TestRootSource(t *testing.T) {
	dir := t.TempDir()
	inst := filepath.Join(dir, "var/lib/cloud/instances/i-1")
	for _, d := range []string{inst + "/sem", inst + "/scripts", filepath.Join(dir, "etc")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/var/lib/cloud/instances/i-1", filepath.Join(dir, "var/lib/cloud/instance")); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("var/lib/cloud/instances/i-1/cloud-config.txt", "#cloud-config\nwrite_files:\n  - path: /etc/motd\n    permissions: '0640'\n    content: hi\n", 0o600)
	write("etc/motd", "hi", 0o640)
	write("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n", 0o644)
	write("etc/group", "root:x:0:\n", 0o644)
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	src := RootSource{root}
	in, err := src.Stat("/etc/motd")
	if err != nil || in.UID != os.Getuid() || in.Mode.Perm() != 0o640 {
		t.Fatalf("Stat = %+v, %v", in, err)
	}
	fsgs := Run(context.Background(), &runner.Env{Root: root, IsRoot: true})
	f := find(fsgs, codeFileOwner.ID, "write_files[0].owner")
	if os.Getuid() == 0 {
		f = find(fsgs, codeFileOK.ID, "write_files[0]")
	}
	if f == nil {
		t.Fatalf("no write_files verdict:\n%s", dump(fsgs))
	}
	if !strings.Contains(f.Message, root.Display("/etc/motd")) {
		t.Errorf("message %q does not name the file under the root", f.Message)
	}
}
