package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// inodeState is everything about a file that a change to its inode would
// show: content, mode, owner, size, mtime, ctime and extended attributes.
// (ctime moves with the link count too, so it is only compared where the
// count does not change.)
type inodeState struct {
	Ino, Size, Mtime, Ctime int64
	Mode, UID, GID          uint32
	Content                 string
	Xattrs                  string
}

func stateOf(t *testing.T, p string) inodeState {
	t.Helper()
	var st unix.Stat_t
	must(t, unix.Lstat(p, &st))
	b, err := os.ReadFile(p)
	must(t, err)
	return inodeState{Ino: int64(st.Ino), Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(),
		Mode: st.Mode, UID: st.Uid, GID: st.Gid, Content: string(b), Xattrs: xattrsOf(t, p)}
}

// xattrsOf lists p's extended attributes as "name=value" lines, sorted.
func xattrsOf(t *testing.T, p string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if err != nil {
		return "unsupported: " + err.Error()
	}
	var out []string
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name == "" {
			continue
		}
		v := make([]byte, 4096)
		vn, err := unix.Lgetxattr(p, name, v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, name+"="+string(v[:vn]))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// linkedPair makes outside/name, with content, mode, xattrs and (as root)
// another owner and an SELinux label, and hard-links root/etc/name to it.
// Both live in one temporary directory, so on one filesystem.
func linkedPair(t *testing.T, name, content string, mode os.FileMode) (root, outside string) {
	t.Helper()
	top := t.TempDir()
	root, outside = filepath.Join(top, "root"), filepath.Join(top, "outside")
	must(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	must(t, os.MkdirAll(outside, 0o755))
	o := filepath.Join(outside, name)
	must(t, os.WriteFile(o, []byte(content), 0o600))
	if err := unix.Setxattr(o, "user.sealtest", []byte("kept"), 0); err != nil {
		t.Logf("no user xattrs on this filesystem: %v", err)
	}
	if os.Geteuid() == 0 {
		must(t, os.Chown(o, 123, 456)) // before the chmod: chown clears setgid
		// Without an LSM claiming it, the kernel stores the label as a
		// plain xattr: enough to see it carried over.
		if err := unix.Setxattr(o, "security.selinux", []byte("system_u:object_r:etc_t:s0"), 0); err != nil {
			t.Logf("cannot set security.selinux here: %v", err)
		}
	}
	// unix.Chmod: os.Chmod drops the setgid bit of an octal literal.
	must(t, unix.Chmod(o, uint32(mode)))
	must(t, os.Link(o, filepath.Join(root, "etc", name)))
	return root, o
}

// checkFreshCopy: in is a new inode with the old owner and xattrs, mode
// wantMode and content want; out is exactly as before.
func checkFreshCopy(t *testing.T, in, out string, before inodeState, wantMode uint32, want string) {
	t.Helper()
	gotOut := stateOf(t, out)
	// The link count dropped, which moves ctime; nothing else may move.
	gotOut.Ctime = before.Ctime
	if gotOut != before {
		t.Errorf("outside file changed:\n before %+v\n after  %+v", before, gotOut)
	}
	gotIn := stateOf(t, in)
	if gotIn.Ino == before.Ino {
		t.Errorf("%s: still the shared inode %d", in, gotIn.Ino)
	}
	if gotIn.Content != want || gotIn.Mode&0o7777 != wantMode || gotIn.UID != before.UID || gotIn.GID != before.GID {
		t.Errorf("%s: content %q mode %o owner %d:%d; want %q %o %d:%d", in, gotIn.Content, gotIn.Mode&0o7777,
			gotIn.UID, gotIn.GID, want, wantMode, before.UID, before.GID)
	}
	if gotIn.Xattrs != before.Xattrs {
		t.Errorf("%s: xattrs %q, want %q", in, gotIn.Xattrs, before.Xattrs)
	}
	ents, _ := os.ReadDir(filepath.Dir(in))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), TempSuffix) {
			t.Errorf("temporary left behind: %s", e.Name())
		}
	}
}

// TestTruncateHardLinkReplaces: `ln /outside/mid ROOT/etc/machine-id`
// then truncating (with a chmod) must leave /outside/mid as it was.
func TestTruncateHardLinkReplaces(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		perm          int
		wantMode      uint32
	}{
		{"machine-id", "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b\n", 0o644, 0o444, 0o444},
		{"syslog", "template-01 kernel: boot\n", 0o640, -1, 0o640},
		{"chmod-only", "", 0o644, 0o444, 0o444}, // empty already: only the mode differs
		{"setgid", "x", 0o2755, -1, 0o2755},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, out := linkedPair(t, tc.name, tc.content, tc.mode)
			before := stateOf(t, out)
			c := openC(t, root)
			o, err := c.TruncateFile("/etc/"+tc.name, tc.perm)
			if err != nil || !o.Changed || o.Links != 2 {
				t.Fatalf("TruncateFile = %+v, %v; want changed with 2 links", o, err)
			}
			checkFreshCopy(t, filepath.Join(root, "etc", tc.name), out, before, tc.wantMode, "")
			// Now a file of its own: a second run changes nothing.
			if o, err := c.TruncateFile("/etc/"+tc.name, tc.perm); err != nil || o.Changed {
				t.Errorf("second TruncateFile = %+v, %v; want unchanged", o, err)
			}
		})
	}
}

// TestTruncateHardLinkInsideRoot: both names inside the root. Replacing
// is still right; a single-name file is still emptied in place.
func TestTruncateHardLinkInsideRoot(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a.log"), filepath.Join(root, "b.log")
	must(t, os.WriteFile(a, []byte("line\n"), 0o644))
	must(t, os.Link(a, b))
	single := filepath.Join(root, "single.log")
	must(t, os.WriteFile(single, []byte("line\n"), 0o644))
	var st0 unix.Stat_t
	must(t, unix.Stat(single, &st0))
	c := openC(t, root)
	if o, err := c.TruncateFile("/a.log", -1); err != nil || o.Links != 2 {
		t.Fatalf("TruncateFile(a) = %+v, %v", o, err)
	}
	if got, _ := os.ReadFile(b); string(got) != "line\n" {
		t.Errorf("b.log = %q, want the old content", got)
	}
	if o, err := c.TruncateFile("/b.log", -1); err != nil || o.Links != 0 || !o.Changed {
		t.Errorf("TruncateFile(b) = %+v, %v; want in place (one name left)", o, err)
	}
	if o, err := c.TruncateFile("/single.log", -1); err != nil || o.Links != 0 {
		t.Errorf("TruncateFile(single) = %+v, %v", o, err)
	}
	var st1 unix.Stat_t
	must(t, unix.Stat(single, &st1))
	if st1.Ino != st0.Ino || st1.Size != 0 {
		t.Errorf("single-name file: ino %d -> %d, size %d; want emptied in place", st0.Ino, st1.Ino, st1.Size)
	}
}

// TestReplaceAndSymlinkHardLink: a rewrite and a symlink swap over a
// hard-linked file leave the other name's inode alone.
func TestReplaceAndSymlinkHardLink(t *testing.T) {
	root, out := linkedPair(t, "ifcfg-eth0", "DEVICE=eth0\nHWADDR=52:54:00:12:34:56\n", 0o640)
	before := stateOf(t, out)
	c := openC(t, root)
	o, err := c.ReplaceFile("/etc/ifcfg-eth0", []byte("DEVICE=eth0\n"), -1, SHA256([]byte(before.Content)))
	if err != nil || !o.Changed || o.Links != 2 {
		t.Fatalf("ReplaceFile = %+v, %v", o, err)
	}
	checkFreshCopy(t, filepath.Join(root, "etc/ifcfg-eth0"), out, before, 0o640, "DEVICE=eth0\n")
	// Same content, other mode: still a new inode, never a chmod in place.
	root2, out2 := linkedPair(t, "machine-id", "uninitialized\n", 0o644)
	before2 := stateOf(t, out2)
	c2 := openC(t, root2)
	if o, err := c2.ReplaceFile("/etc/machine-id", []byte("uninitialized\n"), 0o444, ""); err != nil || o.Links != 2 {
		t.Fatalf("ReplaceFile(mode only) = %+v, %v", o, err)
	}
	checkFreshCopy(t, filepath.Join(root2, "etc/machine-id"), out2, before2, 0o444, "uninitialized\n")

	root3, out3 := linkedPair(t, "dbus-id", "4f6b\n", 0o644)
	before3 := stateOf(t, out3)
	c3 := openC(t, root3)
	if _, err := c3.Symlink("/etc/dbus-id", "/etc/machine-id", KindsOf(KindRegular)); err != nil {
		t.Fatal(err)
	}
	got := stateOf(t, out3)
	got.Ctime = before3.Ctime
	if got != before3 {
		t.Errorf("outside file changed by the symlink swap")
	}
}

// TestWriteFileAtomicHardLink: guestcheck's --output over an existing
// file that is a hard link writes a new inode; the other name keeps its
// content.
func TestWriteFileAtomicHardLink(t *testing.T) {
	dir := t.TempDir()
	other, out := filepath.Join(dir, "other"), filepath.Join(dir, "report.json")
	must(t, os.WriteFile(other, []byte("precious"), 0o600))
	must(t, os.Link(other, out))
	must(t, WriteFileAtomic(out, []byte("{}\n"), 0o644))
	if b, _ := os.ReadFile(other); !bytes.Equal(b, []byte("precious")) {
		t.Errorf("the other name of the output file = %q, want it untouched", b)
	}
	if st, _ := os.Stat(other); st.Mode().Perm() != 0o600 {
		t.Errorf("the other name's mode = %v", st.Mode())
	}
	if b, _ := os.ReadFile(out); string(b) != "{}\n" {
		t.Errorf("output = %q", b)
	}
}
