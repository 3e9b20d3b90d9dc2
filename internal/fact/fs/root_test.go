package fs

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree builds an image root with absolute and relative symlinks, one of
// which points at a host file that must never be read.
func tree(t *testing.T) (string, string) {
	t.Helper()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	must(t, os.WriteFile(secret, []byte("host secret"), 0o644))
	dir := t.TempDir()
	for _, d := range []string{"etc", "run/systemd/resolve", "var"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.WriteFile(filepath.Join(dir, "etc/hostname"), []byte("vm1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "run/systemd/resolve/stub-resolv.conf"), []byte("nameserver 127.0.0.53\n"), 0o644))
	// Absolute link as systemd-resolved installs it: must resolve in the image.
	must(t, os.Symlink("/run/systemd/resolve/stub-resolv.conf", filepath.Join(dir, "etc/resolv.conf")))
	// Relative link.
	must(t, os.Symlink("../run", filepath.Join(dir, "var/run")))
	// Escapes: absolute host path and a relative climb.
	must(t, os.Symlink(secret, filepath.Join(dir, "etc/abs-escape")))
	must(t, os.Symlink("../../../../../../../.."+secret, filepath.Join(dir, "etc/rel-escape")))
	must(t, os.Symlink("loop2", filepath.Join(dir, "etc/loop1")))
	must(t, os.Symlink("loop1", filepath.Join(dir, "etc/loop2")))
	return dir, secret
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func roots(t *testing.T, dir string) map[string]*Root {
	r, err := Open(dir)
	must(t, err)
	t.Cleanup(func() { r.Close() })
	// Root and Confined resolve through one anchor; there is no second,
	// user-space resolver for old kernels (confinable refuses there).
	return map[string]*Root{"openat2": r}
}

func TestRootResolvesInside(t *testing.T) {
	dir, _ := tree(t)
	for name, r := range roots(t, dir) {
		t.Run(name, func(t *testing.T) {
			if r.IsHost() {
				t.Fatal("temp dir reported as host root")
			}
			b, err := r.ReadFile("/etc/resolv.conf")
			if err != nil || string(b) != "nameserver 127.0.0.53\n" {
				t.Errorf("ReadFile(resolv.conf) = %q, %v", b, err)
			}
			if b, err := r.ReadFile("var/run/systemd/resolve/stub-resolv.conf"); err != nil || len(b) == 0 {
				t.Errorf("relative link: %q, %v", b, err)
			}
			for _, p := range []string{"/etc/abs-escape", "/etc/rel-escape", "/../../etc/hostname/../../../.."} {
				b, err := r.ReadFile(p)
				if string(b) == "host secret" {
					t.Errorf("ReadFile(%s) escaped the root", p)
				}
				_ = err
			}
			if _, err := r.ReadFile("/etc/loop1"); err == nil {
				t.Error("symlink loop did not fail")
			}
			if _, err := r.ReadFile("/nope"); !errors.Is(err, iofs.ErrNotExist) {
				t.Errorf("missing file error = %v, want ErrNotExist", err)
			}
		})
	}
}

func TestRootStatLstatReadlink(t *testing.T) {
	dir, _ := tree(t)
	r := roots(t, dir)["openat2"]
	st, err := r.Stat("/etc/resolv.conf")
	if err != nil || !st.Mode().IsRegular() {
		t.Errorf("Stat follows: %v %v", st, err)
	}
	lst, err := r.Lstat("/etc/resolv.conf")
	if err != nil || lst.Mode()&iofs.ModeSymlink == 0 {
		t.Errorf("Lstat must not follow: %v %v", lst, err)
	}
	if tgt, err := r.Readlink("/etc/resolv.conf"); err != nil || tgt != "/run/systemd/resolve/stub-resolv.conf" {
		t.Errorf("Readlink = %q, %v", tgt, err)
	}
	ents, err := r.ReadDir("/etc")
	if err != nil || len(ents) != 6 {
		t.Errorf("ReadDir = %d entries, %v", len(ents), err)
	}
	if !r.Exists("/etc/hostname") || r.Exists("/etc/none") {
		t.Error("Exists")
	}
	// Under an image root too, what is shown is the guest's path: the
	// report names the root once, in its header.
	if got := r.Display("etc/hostname"); got != "/etc/hostname" {
		t.Errorf("Display = %q, want the guest path /etc/hostname", got)
	}
}

func TestHostRoot(t *testing.T) {
	r, err := Open("/")
	must(t, err)
	defer r.Close()
	if !r.IsHost() || r.Display("etc/x") != "/etc/x" {
		t.Errorf("host root: IsHost=%v Display=%q", r.IsHost(), r.Display("etc/x"))
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Open of a missing dir succeeded")
	}
}

func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big"))
	must(t, err)
	must(t, f.Truncate(4097))
	f.Close()
	r, err := Open(dir)
	must(t, err)
	defer r.Close()
	r.limit = 4096
	if _, err := r.ReadFile("/big"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(big) = %v, want ErrTooLarge", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.json")
	must(t, WriteFileAtomic(p, []byte("one"), 0o644))
	must(t, WriteFileAtomic(p, []byte("two"), 0o600))
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "two" || st.Mode().Perm() != 0o600 {
		t.Errorf("content %q mode %v", b, st.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
	if err := WriteFileAtomic(filepath.Join(dir, "d"), nil, 0o644); err == nil || err.Error() != filepath.Join(dir, "d")+": a directory; give a file name" {
		t.Errorf("a directory: %v", err)
	}
	must(t, os.Symlink("report.json", filepath.Join(dir, "l")))
	if err := WriteFileAtomic(filepath.Join(dir, "l"), nil, 0o644); err == nil || !strings.HasSuffix(err.Error(), ": not a regular file, and only a regular file is replaced; give another file name") {
		t.Errorf("a symlink: %v", err)
	}
}

// TestRootProblem: why a root cannot be opened, in the user's words.
func TestRootProblem(t *testing.T) {
	for dir, want := range map[string]string{"/nonexistent": "no such directory", "/dev/null": "not a directory"} {
		if _, err := Open(dir); err == nil || RootProblem(err) != want {
			t.Errorf("%s: %v, want %q", dir, err, want)
		}
		if _, err := OpenConfined(dir); err == nil || RootProblem(err) != want {
			t.Errorf("confined %s: %v, want %q", dir, err, want)
		}
	}
}

// TestReadFileSizes: ReadFile returns whole files of every size around its
// initial buffers (the fstat size, 512 bytes for files that say 0), and
// files whose size changes between fstat and read.
func TestReadFileSizes(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100000} {
		want := bytes.Repeat([]byte{'x'}, n)
		if err := os.WriteFile(filepath.Join(dir, "f"), want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadFile("/f")
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
	// /proc files report size 0 yet have content.
	h, err := Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	want, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := h.ReadFile("/proc/self/mountinfo"); err != nil || len(b) == 0 || !bytes.Equal(b, want) {
		t.Errorf("/proc/self/mountinfo: %d bytes (want %d), %v", len(b), len(want), err)
	}
}

func BenchmarkReadFileLarge(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), bytes.Repeat([]byte("Package: x\n"), 100000), 0o644); err != nil {
		b.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for b.Loop() {
		if _, err := r.ReadFile("/f"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFileProc(b *testing.B) {
	r, err := Open("/")
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for b.Loop() {
		if _, err := r.ReadFile("/proc/self/comm"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestErrorTextNamesThePathOnce holds fs's errors to naming a guest path
// once, whoever shows them: a read that fails as it reads (a directory),
// a missing file, and a caller's own error without a path.
func TestErrorTextNamesThePathOnce(t *testing.T) {
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "etc/passwd"), 0o755))
	r, err := Open(dir)
	must(t, err)
	defer r.Close()
	for _, p := range []string{"/etc/passwd", "/etc/shadow"} {
		_, err := r.ReadFile(p)
		if err == nil {
			t.Fatalf("ReadFile(%s) succeeded", p)
		}
		if n := strings.Count(err.Error(), p); n != 1 {
			t.Errorf("ReadFile(%s) error %q names the path %d times", p, err, n)
		}
		got := ErrorText(p, err)
		if strings.Count(got, p) != 1 || strings.Contains(got, dir) || strings.HasPrefix(got, "open ") || strings.HasPrefix(got, "read ") {
			t.Errorf("ErrorText(%s) = %q, want the guest path once, then why", p, got)
		}
	}
	if got := ErrorText("/etc/x", errors.New("bad")); got != "/etc/x: bad" {
		t.Errorf("ErrorText of a bare error = %q", got)
	}
}
