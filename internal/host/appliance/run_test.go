package appliance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// fakeQEMU writes a shell script to stand for qemu-system-x86_64. As
// root, vmm's jail runs it as a dynamic uid, which must pass through its
// directory and the one above (t.TempDir's are 0700).
func fakeQEMU(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "qemu-system-x86_64")
	writeFile(t, p, []byte("#!/bin/sh\n"+body), 0o755)
	return p
}

// runConfig is an appliance run on a fake kernel (a small file and a
// modules directory of fake modules), a static init and QEMU qemu.
func runConfig(t *testing.T, qemu string) Config {
	t.Helper()
	mods := t.TempDir()
	fakeModules(t, mods)
	kernel := filepath.Join(t.TempDir(), "vmlinuz-6.1.0-test")
	writeFile(t, kernel, []byte("fake kernel image"), 0o644)
	j, err := vmm.NewJail("tcg", "/dev/kvm")
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		QEMU: qemu, Kernel: Kernel{Path: kernel, Version: "6.1.0-test", Modules: mods},
		Init: staticInit(t, t.TempDir()), CacheDir: t.TempDir(), Accel: "tcg",
		FSTypes: []string{"ext4"}, Job: []byte(`{"job":"fake-job-7"}`),
		Timeout: 5 * time.Second, Jail: j,
	}
}

// procsWith lists the processes whose command line is argv.
func procsWith(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// gone waits up to a second for no process to run argv (a SIGKILLed
// child may take a moment to be reaped) and says whether none does.
func gone(argv ...string) bool {
	for range 20 {
		if len(procsWith(argv...)) == 0 {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// applianceError is err as an *Error, failing the test otherwise.
func applianceError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%v (%T), want an *appliance.Error", err, err)
	}
	return e
}

// hangingQEMU is a fake QEMU that prints a console line, starts a child
// in the background and sleeps in the foreground, both for a number of
// seconds no other process on the machine sleeps for; argv is the
// sleeps' command line.
func hangingQEMU(t *testing.T) (qemu string, argv []string) {
	secs := strconv.Itoa(1_000_000 + rand.IntN(1_000_000))
	qemu = fakeQEMU(t, "echo 'Booting the appliance'\nsleep "+secs+" &\nexec sleep "+secs+"\n")
	return qemu, []string{"sleep", secs}
}

// runWatching runs Run while watching for argv's processes, and says
// whether they ran.
func runWatching(ctx context.Context, cfg Config, argv []string) (Result, error, bool) {
	var seen atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if len(procsWith(argv...)) == 2 {
				seen.Store(true)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	res, err := Run(ctx, cfg)
	close(stop)
	wg.Wait()
	return res, err, seen.Load()
}

// TestRunDeadline proves that an appliance that never finishes is
// stopped at the deadline: Run returns an *Error saying so, with the end
// of the console, and QEMU's whole process group, a child it started
// included, is gone when Run returns.
func TestRunDeadline(t *testing.T) {
	qemu, argv := hangingQEMU(t)
	cfg := runConfig(t, qemu)
	cfg.Timeout = 2 * time.Second
	start := time.Now()
	res, err, seen := runWatching(context.Background(), cfg, argv)
	took := time.Since(start)
	e := applianceError(t, err)
	if e.Why != "the appliance did not finish within 2s; QEMU was killed" {
		t.Errorf("why: %q", e.Why)
	}
	if strings.Join(e.Console, "|") != "Booting the appliance" {
		t.Errorf("console: %q", e.Console)
	}
	if !seen {
		t.Error("the fake QEMU's two sleeps were never seen running")
	}
	if !gone(argv...) {
		t.Errorf("still running after Run returned: %v (%q)", procsWith(argv...), argv)
	}
	if took < 2*time.Second || took > 4*time.Second || res.Duration < 2*time.Second {
		t.Errorf("Run took %v, its Duration %v, for a deadline of 2s", took, res.Duration)
	}
	if res.Initramfs == "" || len(res.Modules) == 0 {
		t.Errorf("the result does not say what was booted: %+v", res)
	}
}

// TestRunStopped proves that the end of Run's context stops the
// appliance the same way: an *Error saying it was stopped, and QEMU's
// process group gone.
func TestRunStopped(t *testing.T) {
	qemu, argv := hangingQEMU(t)
	cfg := runConfig(t, qemu)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once both sleeps run (or after 2 s, which fails below).
	saw := make(chan bool, 1)
	go func() {
		ok := false
		for i := 0; i < 100 && !ok; i++ {
			ok = len(procsWith(argv...)) == 2
			if !ok {
				time.Sleep(20 * time.Millisecond)
			}
		}
		saw <- ok
		cancel()
	}()
	_, err := Run(ctx, cfg)
	seen := <-saw
	e := applianceError(t, err)
	if e.Why != "the appliance was stopped: context canceled" {
		t.Errorf("why: %q", e.Why)
	}
	if !seen || !gone(argv...) {
		t.Errorf("seen %v; still running after Run returned: %v", seen, procsWith(argv...))
	}
}

// TestRunNoReport proves that a QEMU that exits cleanly without a word
// on the port is an *Error "ended without a report", carrying the last
// four lines of its console, cleaned.
func TestRunNoReport(t *testing.T) {
	qemu := fakeQEMU(t, `printf 'one\ntwo\nthree\n\033[31mfour\033[0m\r\nfive\n\n six \n'
exit 0
`)
	cfg := runConfig(t, qemu)
	res, err := Run(context.Background(), cfg)
	e := applianceError(t, err)
	if e.Why != "the appliance ended without a report" {
		t.Errorf("why: %q", e.Why)
	}
	if got := strings.Join(e.Console, "|"); got != "three|[31mfour[0m|five|six" {
		t.Errorf("console: %q", got)
	}
	if res.Report != nil {
		t.Errorf("a report: %s", res.Report)
	}
}

// TestRunQEMUFails proves that a QEMU that fails is an *Error saying so,
// with its exit status and the start of its stderr.
func TestRunQEMUFails(t *testing.T) {
	qemu := fakeQEMU(t, `echo 'qemu-system-x86_64: -accel tcg: could not initialize' >&2
echo 'second line' >&2
exit 1
`)
	_, err := Run(context.Background(), runConfig(t, qemu))
	e := applianceError(t, err)
	if want := "QEMU failed: exit status 1: qemu-system-x86_64: -accel tcg: could not initialize; second line"; !strings.HasPrefix(e.Why, want) {
		t.Errorf("why: %q, want %q", e.Why, want)
	}
}

// TestRunRefusesBeforeQEMU proves that what Run needs is checked before
// QEMU starts: a kernel without a module the appliance needs, a
// dynamically linked init and a QEMU that cannot be started are plain
// errors (not an appliance's *Error), and the fake QEMU never ran.
func TestRunRefusesBeforeQEMU(t *testing.T) {
	// The fake QEMU, were it started, would leave a file in a directory
	// its user may write to.
	ranDir := t.TempDir()
	for _, d := range []string{ranDir, filepath.Dir(ranDir)} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	ran := filepath.Join(ranDir, "ran")
	qemu := fakeQEMU(t, "touch "+ran+"\nexit 0\n")
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"missing module", func(c *Config) { c.FSTypes = []string{"xfs"} }, "kernel 6.1.0-test has no module xfs"},
		{"dynamic init", func(c *Config) {
			c.Init = filepath.Join(t.TempDir(), "dyn")
			writeFile(t, c.Init, tinyELF("/lib64/ld-linux-x86-64.so.2"), 0o755)
		}, "dynamically linked"},
		{"no QEMU", func(c *Config) { c.QEMU = filepath.Join(t.TempDir(), "absent") }, "start "},
		{"a read-only image to write", func(c *Config) {
			c.Write = true
			c.Layers = []image.Layer{{Path: "/", Format: "raw", File: openFile(t, "/", os.O_RDONLY)}}
		}, "cannot be opened for writing"},
	} {
		cfg := runConfig(t, qemu)
		tc.edit(&cfg)
		_, err := Run(context.Background(), cfg)
		var e *Error
		if err == nil || errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("QEMU ran")
	}
}

// openFile opens a test file, closed at the test's end.
func openFile(t *testing.T, p string, flag int) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// speakingQEMU is a fake QEMU that plays a whole appliance on the port:
// it finds the port's descriptor, the kernel and the initrd in its
// command line as the real one does, reports in a progress line what it
// could read of them and of the image's descriptors, asks a confirm,
// then sends a report carrying the answer and done.
const speakingQEMU = `
prev=
for a in "$@"; do
	case $a in
	socket,id=port0,fd=*) port=${a#socket,id=port0,fd=} ;;
	esac
	case $prev in
	-kernel) kernel=$a ;;
	-initrd) initrd=$a ;;
	esac
	prev=$a
done
k=$(cat "$kernel")
magic=$(head -c 6 "$initrd")
job=$(grep -a -c 'fake-job-7' "$initrd")
uid=$(id -u)
fl3=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$$/fdinfo/3)
fl4=$(sed -n 's/^flags:[[:space:]]*//p' /proc/$$/fdinfo/4)
top=$(head -c 8 <&3)
printf '{"type":"progress","text":"kernel=%s|magic=%s|job=%s|uid=%s|fd3=%s|fd4=%s|top=%s\\u001b[2J"}\n' "$k" "$magic" "$job" "$uid" "$fl3" "$fl4" "$top" >&$port
printf '{"type":"confirm","report":{"plan":"rm /etc/machine-id"}}\n' >&$port
read -r ans <&$port
printf '{"type":"report","exit":0,"report":{"answer":"%s"}}\n' "$ans" >&$port
printf '{"type":"done","exit":0}\n' >&$port
`

// imageLayers writes a two-layer chain's files (the top one starting
// TOPLAYER) and returns them opened read-only, as image.Vet does.
func imageLayers(t *testing.T) []image.Layer {
	dir := t.TempDir()
	top, base := filepath.Join(dir, "top.qcow2"), filepath.Join(dir, "base.raw")
	writeFile(t, top, []byte("TOPLAYER and more"), 0o600)
	writeFile(t, base, []byte("BASE"), 0o600)
	return []image.Layer{
		{Path: top, Format: "qcow2", File: openFile(t, top, os.O_RDONLY)},
		{Path: base, Format: "raw", File: openFile(t, base, os.O_RDONLY)},
	}
}

// TestRunConversation proves a whole run through Run with a fake QEMU
// that speaks on the port: QEMU finds the port at the descriptor its
// -chardev names, can read the kernel and the initrd (the cached archive,
// then the job) as its own user, runs as the jail's user, gets the top
// layer read-write only for a seal and the others read-only; the host
// answers the confirm as Confirm says and returns the report and exit
// code, its progress cleaned.
func TestRunConversation(t *testing.T) {
	for _, write := range []bool{true, false} {
		t.Run(fmt.Sprintf("write=%v", write), func(t *testing.T) {
			cfg := runConfig(t, fakeQEMU(t, speakingQEMU))
			cfg.Layers, cfg.Write = imageLayers(t), write
			var progress []string
			var plans []string
			cfg.Progress = func(l string) { progress = append(progress, l) }
			cfg.Confirm = func(b []byte) bool { plans = append(plans, string(b)); return write }
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			answer := map[bool]string{true: "yes", false: "no"}[write]
			if string(res.Report) != `{"answer":"`+answer+`"}` || res.Exit != 0 {
				t.Errorf("report %s, exit %d", res.Report, res.Exit)
			}
			if len(plans) != 1 || plans[0] != `{"plan":"rm /etc/machine-id"}` {
				t.Errorf("plans %q", plans)
			}
			if len(progress) != 1 {
				t.Fatalf("progress %q", progress)
			}
			got := map[string]string{}
			for _, kv := range strings.Split(progress[0], "|") {
				k, v, _ := strings.Cut(kv, "=")
				got[k] = v
			}
			want := map[string]string{"kernel": "fake kernel image", "magic": "070701", "job": "1", "uid": strconv.Itoa(cfg.Jail.UID()), "top": "TOPLAYER[2J"}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s=%q, want %q (progress %q)", k, got[k], v, progress[0])
				}
			}
			for fd, rw := range map[string]bool{"fd3": write, "fd4": false} {
				fl, err := strconv.ParseUint(got[fd], 8, 32)
				if err != nil {
					t.Errorf("%s flags %q", fd, got[fd])
					continue
				}
				if acc := fl & unix.O_ACCMODE; (acc == unix.O_RDWR) != rw || (!rw && acc != unix.O_RDONLY) {
					t.Errorf("%s: flags %o, read-write %v wanted", fd, fl, rw)
				}
			}
			if res.Initramfs == "" || filepath.Dir(res.Initramfs) != cfg.CacheDir || len(res.Modules) != 12 {
				t.Errorf("initramfs %s, modules %q", res.Initramfs, res.Modules)
			}
		})
	}
}

// TestRunCutReport proves that an appliance whose QEMU ends in the
// middle of its report (a crash, a power-off before the flush) is an
// *Error: the part of the report that came is never taken.
func TestRunCutReport(t *testing.T) {
	qemu := fakeQEMU(t, `for a in "$@"; do
	case $a in
	socket,id=port0,fd=*) port=${a#socket,id=port0,fd=} ;;
	esac
done
printf '{"type":"progress","text":"sealing"}\n{"type":"report","exit":0,"report":{"status":"sea' >&$port
exit 0
`)
	res, err := Run(context.Background(), runConfig(t, qemu))
	e := applianceError(t, err)
	if e.Why != "the appliance's report could not be read: unexpected EOF" || res.Report != nil {
		t.Errorf("why: %q, report %s", e.Why, res.Report)
	}
}

// TestRunJailUser proves, as root, that QEMU does not run as root but as
// the jail's dynamic user, with no supplementary group.
func TestRunJailUser(t *testing.T) {
	testenv.RequireRoot(t, "the jail drops to a dynamic uid only as root")
	qemu := fakeQEMU(t, `echo "ids $(id -u) $(id -g) $(id -G)" >&2; exit 3`)
	cfg := runConfig(t, qemu)
	_, err := Run(context.Background(), cfg)
	e := applianceError(t, err)
	uid := cfg.Jail.UID()
	if uid == 0 || !strings.Contains(e.Why, fmt.Sprintf("ids %d %d %d", uid, cfg.Jail.GID(), cfg.Jail.GID())) {
		t.Errorf("why: %q; jail uid %d", e.Why, uid)
	}
}

// TestLaunchArgs proves QEMU's command line and descriptors: the
// seccomp sandbox and no network (-nic none, no -netdev), the layers as
// descriptors 3 and up read through /dev/fdset (no image path anywhere
// in the command line), read-only except the top layer of a seal, which
// is a new read-write descriptor; then the kernel, the initrd and the
// port, each at the descriptor its option names.
func TestLaunchArgs(t *testing.T) {
	for _, write := range []bool{false, true} {
		layers := imageLayers(t)
		cfg := Config{Accel: "tcg", MemoryMiB: 512, Layers: layers, Write: write}
		kernel, initrd, port := openFile(t, "/dev/null", os.O_RDONLY), openFile(t, "/dev/null", os.O_RDONLY), openFile(t, "/dev/null", os.O_RDONLY)
		files, args, err := launchArgs(cfg, kernel, initrd, port)
		if err != nil {
			t.Fatal(err)
		}
		if write {
			t.Cleanup(func() { files[0].Close() })
		}
		all := strings.Join(args, "\n")
		opt := func(name string) []string {
			var v []string
			for i := 0; i+1 < len(args); i++ {
				if args[i] == name {
					v = append(v, args[i+1])
				}
			}
			return v
		}
		if got := opt("-sandbox"); len(got) != 1 || got[0] != vmm.Sandbox {
			t.Errorf("-sandbox %q", got)
		}
		if got := opt("-nic"); len(got) != 1 || got[0] != "none" {
			t.Errorf("-nic %q", got)
		}
		for _, bad := range []string{"-netdev", "-net", "-device\nvirtio-net", "-runas", "-run-with"} {
			if strings.Contains(all, bad) {
				t.Errorf("%s in the command line", bad)
			}
		}
		for _, l := range layers {
			if strings.Contains(all, l.Path) || strings.Contains(all, filepath.Dir(l.Path)) {
				t.Errorf("the image's path %s is in the command line", l.Path)
			}
		}
		if got := opt("-add-fd"); strings.Join(got, " ") != "fd=3,set=1,opaque=img-0 fd=4,set=2,opaque=img-1" {
			t.Errorf("-add-fd %q", got)
		}
		files2 := map[string]bool{}
		for _, b := range opt("-blockdev") {
			var m map[string]any
			if err := json.Unmarshal([]byte(b), &m); err != nil {
				t.Fatalf("-blockdev %s: %v", b, err)
			}
			if m["driver"] == "file" {
				fn, _ := m["filename"].(string)
				if !strings.HasPrefix(fn, "/dev/fdset/") {
					t.Errorf("-blockdev %s: not an fd set", b)
				}
				files2[fn] = true
			}
			top := m["node-name"] == "img-0" || m["node-name"] == "img-file0"
			if ro := m["read-only"]; ro != !(write && top) {
				t.Errorf("write %v: -blockdev %s", write, b)
			}
		}
		if len(files2) != 2 || !files2["/dev/fdset/1"] || !files2["/dev/fdset/2"] {
			t.Errorf("file nodes %v", files2)
		}
		if len(files) != 5 {
			t.Fatalf("%d descriptors, want 5", len(files))
		}
		// Descriptor n is files[n-3].
		at := func(opt string) *os.File {
			var n int
			if _, err := fmt.Sscanf(opt, "/proc/self/fd/%d", &n); err != nil || n < 3 || n-3 >= len(files) {
				t.Fatalf("%q: not a descriptor of QEMU's", opt)
			}
			return files[n-3]
		}
		if at(opt("-kernel")[0]) != kernel || at(opt("-initrd")[0]) != initrd {
			t.Error("-kernel or -initrd names the wrong descriptor")
		}
		if got := opt("-chardev"); len(got) != 1 || got[0] != "socket,id=port0,fd=7" || files[4] != port {
			t.Errorf("-chardev %q, descriptor 7 is the port: %v", got, files[4] == port)
		}
		if !strings.Contains(all, "virtserialport,chardev=port0,name="+PortName) || !strings.Contains(all, "virtio-blk-pci,drive=img-0,") {
			t.Errorf("devices: %s", all)
		}
		if got := opt("-append"); len(got) != 1 || !strings.Contains(got[0], "rdinit=/init") || !strings.Contains(got[0], "console=ttyS0") {
			t.Errorf("-append %q", got)
		}
		if files[1] != layers[1].File {
			t.Error("descriptor 4 is not the base layer's")
		}
		fl, err := unix.FcntlInt(files[0].Fd(), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		if write {
			if files[0] == layers[0].File || fl&unix.O_ACCMODE != unix.O_RDWR {
				t.Errorf("a seal's top layer: the vetted file %v, flags %o", files[0] == layers[0].File, fl)
			}
			st0, _ := files[0].Stat()
			st1, _ := layers[0].File.Stat()
			if !os.SameFile(st0, st1) {
				t.Error("the read-write top layer is another file than the vetted one")
			}
		} else if files[0] != layers[0].File || fl&unix.O_ACCMODE != unix.O_RDONLY {
			t.Errorf("a plan's top layer: flags %o", fl)
		}
	}
}

// TestStage proves the files QEMU reads as its own: the sources
// concatenated in one unnamed file (no name to find or leave behind),
// mode 0600, owned by the jail's user.
func TestStage(t *testing.T) {
	src := filepath.Join(t.TempDir(), "initrd")
	writeFile(t, src, []byte("ARCHIVE1"), 0o600)
	j, err := vmm.NewJail("tcg", "/dev/kvm")
	if err != nil {
		t.Fatal(err)
	}
	f, err := stage(j, src, []byte("JOB"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil || !bytes.Equal(b, []byte("ARCHIVE1JOB")) {
		t.Errorf("staged %q, %v", b, err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if st.Mode().Perm() != 0o600 || int(sys.Uid) != j.UID() || int(sys.Gid) != j.GID() || sys.Nlink != 0 {
		t.Errorf("mode %v, owner %d:%d, links %d; want 0600, %d:%d, 0", st.Mode(), sys.Uid, sys.Gid, sys.Nlink, j.UID(), j.GID())
	}
	if _, err := stage(j, filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing source: no error")
	}
}
