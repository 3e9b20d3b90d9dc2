package procs

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// fakeProc writes a /proc tree under dir: stat for each pid, comm only
// for 30 (as agent's fakes do), cmdline, and /proc/self linking to 12.
func fakeProc(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"proc/1/stat":     "1 (systemd) S 0 1 1 0 -1 4194560\n",
		"proc/1/cmdline":  "/sbin/init\x00splash\x00",
		"proc/7/stat":     "7 (a) b)) S 1 7 7 0\n",
		"proc/7/cmdline":  "",
		"proc/12/stat":    "12 (guestcheck) R 7 12 12 0\n",
		"proc/12/cmdline": "guestcheck\x00--json\x00",
		"proc/30/comm":    "qemu-ga\n",
		"proc/30/cmdline": "/usr/bin/qemu-ga\x00-m\x00virtio-serial\x00",
		"proc/30/environ": "A=1\x00B=x=y\x00junk\x00",
		"proc/31/cmdline": strings.Repeat("x", MaxCmdline+1),
		"proc/self1/stat": "not a process\n",
	}
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range [][2]string{{"12", "proc/self"}, {"/usr/bin/qemu-ga", "proc/30/exe"}, {"socket:[4242]", "proc/30/fd/3"}, {"/dev/null", "proc/30/fd/0"}} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, l[1])), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRead(t *testing.T) {
	r, err := fs.Open(fakeProc(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tb := Read(context.Background(), r)
	want := []Proc{
		{PID: 1, PPID: 0, Comm: "systemd", Argv: []string{"/sbin/init", "splash"}},
		{PID: 7, PPID: 1, Comm: "a) b)"},
		{PID: 12, PPID: 7, Comm: "guestcheck", Argv: []string{"guestcheck", "--json"}},
		{PID: 30, Comm: "qemu-ga", Argv: []string{"/usr/bin/qemu-ga", "-m", "virtio-serial"}, Exe: "/usr/bin/qemu-ga"},
		{PID: 31}, // an over-long command line is left out, not cut
	}
	if tb.Err != nil || tb.Cut || !reflect.DeepEqual(tb.Procs, want) {
		t.Fatalf("Read = %+v", tb)
	}
	if tb.Self.PID != 12 || tb.Self.PPID != 7 {
		t.Errorf("Self = %+v", tb.Self)
	}
	if p, ok := tb.Find(7); !ok || p.Comm != "a) b)" {
		t.Errorf("Find(7) = %+v, %v", p, ok)
	}
	if _, ok := tb.Find(8); ok {
		t.Error("Find(8) found a process /proc does not list")
	}
	if ga := tb.Named("qemu-ga"); len(ga) != 1 || ga[0].PID != 30 {
		t.Errorf("Named(qemu-ga) = %+v", ga)
	}
	if env := Environ(r, 30); !reflect.DeepEqual(env, map[string]string{"A": "1", "B": "x=y"}) {
		t.Errorf("Environ = %v", env)
	}
	if fds := FDTargets(r, 30); !reflect.DeepEqual(fds, []string{"/dev/null", "socket:[4242]"}) {
		t.Errorf("FDTargets = %v", fds)
	}
	owners, known, err := SocketOwners(context.Background(), r, tb, map[uint64]bool{4242: true})
	if err != nil || !known || owners[4242] != 30 {
		t.Errorf("SocketOwners = %v, %v, %v", owners, known, err)
	}
}

// TestReadersAgree: sealprep's Confined and guestcheck's Root read the
// same table from the same tree, and the same socket owners.
func TestReadersAgree(t *testing.T) {
	dir := fakeProc(t)
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
	a, b := Read(context.Background(), r), Read(context.Background(), c)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("Root read %+v\nConfined read %+v", a, b)
	}
	want := map[uint64]bool{4242: true}
	oa, _, _ := SocketOwners(context.Background(), r, a, want)
	ob, _, _ := SocketOwners(context.Background(), c, b, want)
	if !reflect.DeepEqual(oa, ob) {
		t.Errorf("socket owners: Root %v, Confined %v", oa, ob)
	}
}

// TestNoProc: an image root has no /proc; the table says why it is empty.
func TestNoProc(t *testing.T) {
	r, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tb := Read(context.Background(), r)
	if tb.Err == nil || len(tb.Procs) != 0 {
		t.Errorf("Read without /proc = %+v", tb)
	}
	if _, _, err := SocketOwners(context.Background(), r, tb, map[uint64]bool{1: true}); err == nil {
		t.Error("SocketOwners without /proc gave no error")
	}
}

// TestDeadline: a walk whose context has ended stops and says it was cut.
func TestDeadline(t *testing.T) {
	r, err := fs.Open(fakeProc(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if tb := Read(ctx, r); !tb.Cut || len(tb.Procs) != 0 {
		t.Errorf("Read after the deadline = %+v", tb)
	}
}

// TestLive: on the running system the table holds this very process, and
// the owner of a socket it listens on is found.
func TestLive(t *testing.T) {
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tb := Read(context.Background(), r)
	if tb.Err != nil {
		t.Skipf("no /proc: %v", tb.Err)
	}
	self, ok := tb.Find(os.Getpid())
	if !ok || tb.Self.PID != os.Getpid() || self.PPID != os.Getppid() || len(self.Argv) == 0 {
		t.Fatalf("this process: %+v, %v (Self %+v)", self, ok, tb.Self)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	ino := st.Sys().(*syscall.Stat_t).Ino
	owners, _, err := SocketOwners(context.Background(), r, tb, map[uint64]bool{ino: true})
	if err != nil || owners[ino] != os.Getpid() {
		t.Errorf("the socket this process listens on: owners %v, %v", owners, err)
	}
}
