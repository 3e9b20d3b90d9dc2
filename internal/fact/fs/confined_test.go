package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"golang.org/x/sys/unix"
)

// confinedTree builds a root whose symlinks try every way out, and an
// outside directory holding the files they aim at.
func confinedTree(t *testing.T) (root, outside string) {
	t.Helper()
	outside = t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "victim"), []byte("outside"), 0o644))
	must(t, os.MkdirAll(filepath.Join(outside, "dir/sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "dir/sub/f"), []byte("outside"), 0o644))
	root = t.TempDir()
	for _, d := range []string{"etc", "var/log", "data/sub"} {
		must(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(root, "etc/hostname"), []byte("vm1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "data/sub/f"), []byte("in"), 0o644))
	climb := strings.Repeat("../", 30)
	must(t, os.Symlink(filepath.Join(outside, "victim"), filepath.Join(root, "etc/abs-file")))
	must(t, os.Symlink(climb+strings.TrimPrefix(filepath.Join(outside, "victim"), "/"), filepath.Join(root, "etc/rel-file")))
	must(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "abs-dir")))
	must(t, os.Symlink(climb+strings.TrimPrefix(filepath.Join(outside, "dir"), "/"), filepath.Join(root, "rel-dir")))
	must(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "data/sub/link-out")))
	must(t, os.Symlink("/etc", filepath.Join(root, "etc-abs"))) // in-root absolute link
	return root, outside
}

func outsideIntact(t *testing.T, outside string) {
	t.Helper()
	for _, p := range []string{"victim", "dir/sub/f"} {
		b, err := os.ReadFile(filepath.Join(outside, p))
		if err != nil || string(b) != "outside" {
			t.Fatalf("outside file %s changed: %q %v", p, b, err)
		}
	}
}

func openC(t *testing.T, dir string) *Confined {
	t.Helper()
	c, err := OpenConfined(dir)
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConfinedNeverLeavesRoot(t *testing.T) {
	root, outside := confinedTree(t)
	c := openC(t, root)
	if c.IsHost() {
		t.Fatal("temp dir reported as the host root")
	}
	// Parents through links out of the root resolve inside it, where the
	// target does not exist.
	for _, p := range []string{"/abs-dir/sub/f", "/rel-dir/sub/f"} {
		if _, err := c.Truncate(p, -1); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("Truncate(%s) = %v, want not-exist or nil", p, err)
		}
		if _, err := c.Remove(p, KindsOf(KindRegular)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("Remove(%s) = %v", p, err)
		}
		if _, err := c.Replace(p, []byte("x"), 0o644, ""); err == nil {
			t.Errorf("Replace(%s) created a file through a link out", p)
		}
		if _, err := c.ReadFile(p); !errors.Is(err, iofs.ErrNotExist) {
			t.Errorf("ReadFile(%s) = %v, want not-exist", p, err)
		}
	}
	// Final components that are links out: refused as the wrong kind,
	// or unlinked themselves.
	for _, p := range []string{"/etc/abs-file", "/etc/rel-file"} {
		if _, err := c.Truncate(p, -1); !errors.Is(err, ErrKind) {
			t.Errorf("Truncate(%s) = %v, want ErrKind", p, err)
		}
		if _, err := c.Replace(p, []byte("x"), -1, ""); !errors.Is(err, ErrKind) {
			t.Errorf("Replace(%s) = %v, want ErrKind", p, err)
		}
		if _, err := c.Remove(p, KindsOf(KindRegular)); !errors.Is(err, ErrKind) {
			t.Errorf("Remove(%s, regular) = %v, want ErrKind", p, err)
		}
		st, err := c.Remove(p, KindsOf(KindSymlink))
		if err != nil || st.Removed != 1 {
			t.Errorf("Remove(%s, symlink) = %+v, %v", p, st, err)
		}
	}
	// A tree holding a link out: the link goes, its target stays.
	st, err := c.Remove("/data", KindsOf(KindRegular, KindDir, KindSymlink))
	if err != nil || !st.Complete() || st.Removed != 4 {
		t.Errorf("Remove(/data) = %+v, %v", st, err)
	}
	// A directory op on a link is refused, never followed.
	if _, err := c.ReadDir("/abs-dir"); !errors.Is(err, ErrSymlink) {
		t.Errorf("ReadDir(/abs-dir) = %v, want ErrSymlink", err)
	}
	if _, err := c.ScanTree("/rel-dir", KindsOf(KindRegular, KindDir)); !errors.Is(err, ErrKind) {
		t.Errorf("ScanTree(/rel-dir) = %v, want ErrKind", err)
	}
	// Removing the link itself as a directory is refused by kind.
	if _, err := c.Remove("/abs-dir", KindsOf(KindDir, KindRegular)); !errors.Is(err, ErrKind) {
		t.Errorf("Remove(/abs-dir, dir) = %v", err)
	}
	// In-root absolute links in parents resolve inside the root.
	if b, err := c.ReadFile("/etc-abs/hostname"); err != nil || string(b) != "vm1\n" {
		t.Errorf("ReadFile through in-root absolute link = %q, %v", b, err)
	}
	if _, err := c.Truncate("/etc-abs/hostname", -1); err != nil {
		t.Errorf("Truncate through in-root absolute link: %v", err)
	}
	outsideIntact(t, outside)
}

func TestConfinedTruncateInPlace(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "machine-id")
	must(t, os.WriteFile(p, []byte("abc\n"), 0o644))
	var before unix.Stat_t
	must(t, unix.Stat(p, &before))
	c := openC(t, root)
	changed, err := c.Truncate("/machine-id", 0o444)
	if err != nil || !changed {
		t.Fatalf("Truncate = %v, %v", changed, err)
	}
	var after unix.Stat_t
	must(t, unix.Stat(p, &after))
	if after.Ino != before.Ino || after.Size != 0 || after.Mode&0o7777 != 0o444 {
		t.Errorf("after: ino %d->%d size %d mode %o", before.Ino, after.Ino, after.Size, after.Mode&0o7777)
	}
	if changed, err := c.Truncate("/machine-id", 0o444); err != nil || changed {
		t.Errorf("second Truncate = %v, %v; want unchanged", changed, err)
	}
	if changed, err := c.Truncate("/absent", -1); err != nil || changed {
		t.Errorf("Truncate(absent) = %v, %v", changed, err)
	}
	must(t, unix.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	if _, err := c.Truncate("/fifo", -1); !errors.Is(err, ErrKind) {
		t.Errorf("Truncate(fifo) = %v, want ErrKind", err)
	}
	if _, err := c.ReadFile("/fifo"); !errors.Is(err, ErrKind) {
		t.Errorf("ReadFile(fifo) = %v, want ErrKind", err)
	}
}

func TestConfinedReplace(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ifcfg")
	must(t, os.WriteFile(p, []byte("HWADDR=x\nA=1\n"), 0o640))
	if err := unix.Setxattr(p, "user.test", []byte("label"), 0); err != nil {
		t.Logf("no user xattrs here: %v", err)
	}
	c := openC(t, root)
	if _, err := c.Replace("/ifcfg", []byte("A=1\n"), -1, SHA256([]byte("other"))); !errors.Is(err, ErrChanged) {
		t.Errorf("Replace with a stale hash = %v, want ErrChanged", err)
	}
	// A leftover temporary from an interrupted run is replaced.
	must(t, os.WriteFile(filepath.Join(root, tempName("ifcfg")), []byte("junk"), 0o600))
	changed, err := c.Replace("/ifcfg", []byte("A=1\n"), -1, SHA256([]byte("HWADDR=x\nA=1\n")))
	if err != nil || !changed {
		t.Fatalf("Replace = %v, %v", changed, err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "A=1\n" || st.Mode().Perm() != 0o640 {
		t.Errorf("after Replace: %q %v", b, st.Mode())
	}
	buf := make([]byte, 16)
	if n, err := unix.Getxattr(p, "user.test", buf); err == nil && string(buf[:n]) != "label" {
		t.Errorf("xattr not carried over: %q", buf[:n])
	}
	if _, err := os.Lstat(filepath.Join(root, tempName("ifcfg"))); !os.IsNotExist(err) {
		t.Errorf("temporary left behind: %v", err)
	}
	if changed, err := c.Replace("/ifcfg", []byte("A=1\n"), -1, ""); err != nil || changed {
		t.Errorf("identical Replace = %v, %v", changed, err)
	}
	// Create.
	if changed, err := c.Replace("/new.service", []byte("[Unit]\n"), 0o644, SHA256(nil)); err != nil || !changed {
		t.Errorf("create = %v, %v", changed, err)
	}
}

func TestConfinedSymlinkAndMkdir(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "var/lib/dbus"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "var/lib/dbus/machine-id"), []byte("old\n"), 0o644))
	c := openC(t, root)
	if changed, err := c.Symlink("/var/lib/dbus/machine-id", "/etc/machine-id", KindsOf(KindRegular)); err != nil || !changed {
		t.Fatalf("Symlink = %v, %v", changed, err)
	}
	if tgt, _ := os.Readlink(filepath.Join(root, "var/lib/dbus/machine-id")); tgt != "/etc/machine-id" {
		t.Errorf("link target %q", tgt)
	}
	if changed, err := c.Symlink("/var/lib/dbus/machine-id", "/etc/machine-id", KindsOf(KindRegular)); err != nil || changed {
		t.Errorf("second Symlink = %v, %v", changed, err)
	}
	if _, err := c.Symlink("/var/lib/dbus/machine-id", "/elsewhere", KindsOf(KindRegular)); !errors.Is(err, ErrKind) {
		t.Errorf("replacing a link not in the replace set = %v, want ErrKind", err)
	}
	if _, err := c.Symlink("/var/lib", "/x", KindsOf(KindRegular, KindDir)); !errors.Is(err, ErrKind) {
		t.Errorf("Symlink over a directory = %v, want ErrKind", err)
	}
	if changed, err := c.Mkdir("/var/lib/new", 0o755); err != nil || !changed {
		t.Errorf("Mkdir = %v, %v", changed, err)
	}
	if changed, err := c.Mkdir("/var/lib/new", 0o755); err != nil || changed {
		t.Errorf("second Mkdir = %v, %v", changed, err)
	}
}

func TestConfinedRemoveKeepsUnlistedKinds(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "tmp/a/b"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "tmp/a/b/f"), nil, 0o644))
	must(t, unix.Mkfifo(filepath.Join(root, "tmp/a/fifo"), 0o644))
	c := openC(t, root)
	st, err := c.Remove("/tmp/a", KindsOf(KindRegular, KindDir))
	if err != nil {
		t.Fatal(err)
	}
	if st.Complete() || st.Kept != 1 || !st.KeptKinds.Has(KindFIFO) || st.Removed != 2 {
		t.Errorf("stats %+v", st)
	}
	if _, err := os.Lstat(filepath.Join(root, "tmp/a/fifo")); err != nil {
		t.Errorf("fifo removed: %v", err)
	}
	scan, err := c.ScanTree("/tmp/a", KindsOf(KindRegular, KindDir))
	if err != nil || scan.Removed != 0 || scan.Kept != 1 {
		t.Errorf("ScanTree after = %+v, %v", scan, err)
	}
}

// TestConfinedMounts needs root: a tmpfs mounted inside a tree is never
// entered, and a file bind-mounted over another is never truncated.
func TestConfinedMounts(t *testing.T) {
	testenv.RequireRoot(t, "needs root to mount")
	root := t.TempDir()
	mnt := filepath.Join(root, "tmp/mnt")
	must(t, os.MkdirAll(mnt, 0o755))
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		testenv.Missing(t, "root", fmt.Sprintf("cannot mount tmpfs here: %v", err))
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	must(t, os.WriteFile(filepath.Join(mnt, "on-other-fs"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "tmp/plain"), []byte("x"), 0o644))
	outside := filepath.Join(t.TempDir(), "host-hostname")
	must(t, os.WriteFile(outside, []byte("host\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	target := filepath.Join(root, "etc/hostname")
	must(t, os.WriteFile(target, []byte("vm\n"), 0o644))
	if err := unix.Mount(outside, target, "", unix.MS_BIND, ""); err != nil {
		testenv.Missing(t, "root", fmt.Sprintf("cannot bind-mount here: %v", err))
	}
	t.Cleanup(func() { unix.Unmount(target, unix.MNT_DETACH) })

	c := openC(t, root)
	st, err := c.Remove("/tmp", KindsOf(KindRegular, KindDir))
	if err != nil || st.Mounts != 1 {
		t.Errorf("Remove(/tmp) = %+v, %v; want one mount kept", st, err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "on-other-fs")); err != nil {
		t.Errorf("file on the other mount removed: %v", err)
	}
	if _, err := c.Remove("/tmp/mnt", KindsOf(KindDir, KindRegular)); !errors.Is(err, ErrMountPoint) {
		t.Errorf("Remove(mount point) = %v, want ErrMountPoint", err)
	}
	if _, err := c.Truncate("/etc/hostname", -1); !errors.Is(err, ErrMountPoint) {
		t.Errorf("Truncate(bind-mounted file) = %v, want ErrMountPoint", err)
	}
	if b, _ := os.ReadFile(outside); string(b) != "host\n" {
		t.Errorf("bind-mounted host file changed: %q", b)
	}
}

func TestConfinedWithoutOpenat2(t *testing.T) {
	if err := confinable("/mnt/img", false, unix.ENOSYS); !errors.Is(err, ErrNoOpenat2) {
		t.Errorf("image root without openat2 = %v, want ErrNoOpenat2", err)
	}
	if err := confinable("/", true, unix.ENOSYS); err != nil {
		t.Errorf("host root without openat2 = %v, want nil", err)
	}
	if err := confinable("/mnt/img", false, nil); err != nil {
		t.Errorf("image root with openat2 = %v", err)
	}
	// The host fallback resolves from "/" with the kernel's own rules.
	c := openC(t, "/")
	if !c.IsHost() {
		t.Fatal("/ not recognised as the host root")
	}
	c.openat2 = false
	if _, err := c.Lstat("/"); err != nil {
		t.Errorf("host root Lstat without openat2: %v", err)
	}
}

func TestKindsJSON(t *testing.T) {
	k := KindsOf(KindRegular, KindSymlink)
	b, err := k.MarshalJSON()
	if err != nil || string(b) != `["regular","symlink"]` {
		t.Fatalf("MarshalJSON = %s, %v", b, err)
	}
	var back Kinds
	if err := back.UnmarshalJSON(b); err != nil || back != k {
		t.Errorf("UnmarshalJSON = %v, %v", back, err)
	}
	if err := back.UnmarshalJSON([]byte(`["nope"]`)); err == nil {
		t.Error("unknown kind accepted")
	}
}
