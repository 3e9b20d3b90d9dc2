package prove

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// fakeRun boots clones of a small raw template on the fake QEMU.
func fakeRun(t *testing.T, mode string, d time.Duration) ([]CloneResult, time.Duration) {
	t.Helper()
	res, took, _, _ := fakeRunDir(t, mode, d)
	return res, took
}

// searchableTempDir is t.TempDir with it and its parent searchable by
// others (both are 0700): as root, QEMU's user must pass through to the
// run's directory.
func searchableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tinyTemplate is a 1 MiB raw template in dir, with mode, and its file
// open read-only as a vetted chain's would be (closed at cleanup).
func tinyTemplate(t *testing.T, dir string, mode os.FileMode) (string, *os.File) {
	t.Helper()
	img := filepath.Join(dir, "template.img")
	if err := os.WriteFile(img, make([]byte, 1<<20), mode); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return img, f
}

// fakeRunDir boots clones of a small raw template, passed as a one-layer
// chain, on the fake QEMU under the run's jail; it returns the run's
// directory (clones/clone-N) and the jail too.
func fakeRunDir(t *testing.T, mode string, d time.Duration) ([]CloneResult, time.Duration, string, Jail) {
	t.Helper()
	return fakeRunWith(t, mode, d, func(*Config) {})
}

// fakeRunWith is fakeRunDir with the run's configuration changed by set.
func fakeRunWith(t *testing.T, mode string, d time.Duration, set func(*Config)) ([]CloneResult, time.Duration, string, Jail) {
	t.Helper()
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	t.Setenv(fakeEnv, mode)
	dir := searchableTempDir(t)
	img, f := tinyTemplate(t, dir, 0o644)
	cfg := Config{Image: img, Clones: 2, QEMU: fakeBin, QEMUImg: qemuImg, Kernel: "/vmlinuz"}
	set(&cfg)
	cfg = cfg.withDefaults()
	boot := Boot{Firmware: FirmwareKernel, Kernel: "/vmlinuz", Accel: AccelTCG, MemoryMiB: 128, CPUs: 1,
		Chain: &image.Chain{Layers: []image.Layer{{Path: img, Format: "raw", VirtualSize: 1 << 20, File: f}}}}
	j, err := NewJail(AccelTCG, "/dev/kvm")
	if err != nil {
		t.Fatal(err)
	}
	clones := filepath.Join(dir, "clones")
	if err := os.Mkdir(clones, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := StageBoot(clones, &Boot{}, j); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	res := runClones(ctx, cfg, boot, clones, j, "a1b2c3")
	return res, time.Since(start), clones, j
}

// TestDeadline: a guest that never boots is stopped at the run's
// deadline, fails as a timeout with its console tail, and leaves no QEMU.
func TestDeadline(t *testing.T) {
	res, took := fakeRun(t, "silent", 4*time.Second)
	if took > 20*time.Second {
		t.Errorf("the run took %s past a 4s deadline", took)
	}
	for _, c := range res {
		if c.Boot != BootTimeout || !strings.Contains(c.Problem, "deadline") {
			t.Errorf("%s: boot %q, problem %q; want a timeout", c.Name, c.Boot, c.Problem)
		}
		if len(c.ConsoleTail) == 0 || !strings.Contains(strings.Join(c.ConsoleTail, "\n"), "Booting from Hard Disk") {
			t.Errorf("%s: console tail %q", c.Name, c.ConsoleTail)
		}
		if why := cloneFailed(c); !strings.Contains(why, "deadline") {
			t.Errorf("%s: failure %q", c.Name, why)
		}
	}
	noFakeLeft(t)
}

// TestPanicFailsFast: a kernel panic on the console ends the boot at
// once, long before the deadline, naming the panic; as it comes before
// init, the clone boots three times in all.
func TestPanicFailsFast(t *testing.T) {
	res, took := fakeRun(t, "panic", 60*time.Second)
	if took > 30*time.Second {
		t.Errorf("a panicked guest took %s to fail", took)
	}
	for _, c := range res {
		if c.Boot != BootFailed || !strings.Contains(c.Problem, "Kernel panic") {
			t.Errorf("%s: boot %q, problem %q; want the panic", c.Name, c.Boot, c.Problem)
		}
		if !strings.Contains(strings.Join(c.ConsoleTail, "\n"), "Unable to mount root fs") {
			t.Errorf("%s: console tail %q", c.Name, c.ConsoleTail)
		}
		// A panic before init is booted again, up to three boots in all.
		if len(c.Notes) != maxAttempts-1 {
			t.Errorf("%s: notes %q, want %d retries", c.Name, c.Notes, maxAttempts-1)
		}
	}
	noFakeLeft(t)
}

// TestQEMUFailsToStart: QEMU's own error is the clone's problem.
func TestQEMUFailsToStart(t *testing.T) {
	res, _ := fakeRun(t, "exit", 30*time.Second)
	for _, c := range res {
		if c.Boot != BootFailed || !strings.Contains(c.Problem, "failed to initialize kvm") {
			t.Errorf("%s: boot %q, problem %q", c.Name, c.Boot, c.Problem)
		}
	}
}

// noFakeLeft fails when a fake QEMU of this test still runs.
func noFakeLeft(t *testing.T) {
	t.Helper()
	self, _ := os.Executable()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || (exe != self && exe != fakeBin) || e.Name() == "self" {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if strings.Contains(string(env), fakeEnv+"=") {
			t.Errorf("a fake QEMU (pid %s) is still running", e.Name())
		}
	}
}

// TestTemplateInUse: a template another QEMU holds open for writing is
// refused before anything boots.
func TestTemplateInUse(t *testing.T) {
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	qsdPath := testenv.Tool(t, "qemu-storage-daemon", "qemu-system-common")
	dir := t.TempDir()
	img := filepath.Join(dir, "template.qcow2")
	if out, err := exec.Command(qemuImg, "create", "-q", "-f", "qcow2", img, "64M").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	sock := filepath.Join(dir, "nbd.sock")
	qsd := exec.Command(qsdPath,
		"--blockdev", `{"driver":"file","node-name":"f","filename":"`+img+`"}`,
		"--blockdev", `{"driver":"qcow2","node-name":"q","file":"f"}`,
		"--nbd-server", "addr.type=unix,addr.path="+sock,
		"--export", "type=nbd,id=e,node-name=q,writable=on")
	if err := qsd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { qsd.Process.Signal(syscall.SIGKILL); qsd.Wait() }()
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 100 {
			t.Fatal("qemu-storage-daemon did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err := Run(context.Background(), Config{Image: img, QEMU: fakeBin, QEMUImg: qemuImg, Timeout: time.Minute}, nil)
	var ref *Refusal
	if !errors.As(err, &ref) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("%v, want a refusal: the template is in use", err)
	}
}

// TestNoAgent: without an agent, the verdict is the console's summary
// line, and the report says so.
func TestNoAgent(t *testing.T) {
	old := noAgentGrace
	noAgentGrace = 2 * time.Second
	defer func() { noAgentGrace = old }()
	res, _ := fakeRun(t, "noagent", 60*time.Second)
	for _, c := range res {
		if c.Boot != BootUp || c.VerdictSource != SourceConsole || c.Verdict == nil || c.Verdict.Status != "PASS" || c.Identity != nil {
			t.Errorf("%s: %+v", c.Name, c)
		}
		if len(c.Notes) == 0 || !strings.Contains(c.Notes[0], "no guest agent answered") {
			t.Errorf("%s: notes %q", c.Name, c.Notes)
		}
		if why := cloneFailed(c); why != "" {
			t.Errorf("%s fails: %s", c.Name, why)
		}
	}
	noFakeLeft(t)
}

// TestEarlyPanicRetried: a kernel panic before init under TCG boots the
// clone again on a fresh overlay, and the report says so; a panic after
// init is never retried (emergency shells and the initramfs giving up
// are userspace: TestConsoleDead).
func TestEarlyPanicRetried(t *testing.T) {
	res, _ := fakeRun(t, "earlypanic", 6*time.Second)
	for _, c := range res {
		if len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "attempt 1: the guest kernel panicked before it ran init") {
			t.Errorf("%s: notes %q", c.Name, c.Notes)
		}
		if c.Boot != BootTimeout {
			t.Errorf("%s: boot %q after the retry, want the deadline's timeout", c.Name, c.Boot)
		}
	}
	noFakeLeft(t)
}

// TestFirmwareUUIDs: every clone's QEMU gets its own random v4 SMBIOS
// system UUID, the one its result names; with --firmware-uuid shared all
// get one.
func TestFirmwareUUIDs(t *testing.T) {
	old := noAgentGrace
	noAgentGrace = time.Second
	defer func() { noAgentGrace = old }()
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, mode := range []string{UUIDPerClone, UUIDShared} {
		res, _, dir, _ := fakeRunWith(t, "noagent", 60*time.Second, func(c *Config) { c.FirmwareUUID = mode })
		seen := map[string]bool{}
		for i, c := range res {
			if !v4.MatchString(c.FirmwareUUID) {
				t.Errorf("%s: %s: firmware UUID %q, want a random v4 UUID", mode, c.Name, c.FirmwareUUID)
			}
			seen[c.FirmwareUUID] = true
			b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("clone-%d", i+1), "fake-qemu.json"))
			if err != nil {
				t.Fatal(err)
			}
			var got struct{ Args []string }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if sm := argValues(got.Args, "-smbios"); len(sm) != 1 || sm[0] != "type=1,uuid="+c.FirmwareUUID {
				t.Errorf("%s: %s: QEMU's -smbios %q, want type=1,uuid=%s", mode, c.Name, sm, c.FirmwareUUID)
			}
		}
		if want := map[string]int{UUIDPerClone: len(res), UUIDShared: 1}[mode]; len(seen) != want || len(res) != 2 {
			t.Errorf("%s: %d clones with %d UUIDs, want 2 with %d", mode, len(res), len(seen), want)
		}
	}
	noFakeLeft(t)
	if err := (Config{Image: "x", Clones: 2, MemoryMiB: 512, CPUs: 1, Timeout: time.Hour, Firmware: FirmwareAuto, Accel: AccelAuto, FirmwareUUID: "same"}).Validate(); err == nil ||
		err.Error() != `--firmware-uuid "same": one of per-clone, shared` {
		t.Errorf("--firmware-uuid same: %v", err)
	}
}

// TestSharedUUIDCause: clones given one firmware UUID that share their
// machine-id are told the UUID is the cause and the fix, not a seal.
func TestSharedUUIDCause(t *testing.T) {
	fs := []Failure{{Item: "machine-id", Message: "clone-1 and clone-2 share machine-id (h)", Fix: "seal"},
		{Item: "ssh-host-key", Message: "clone-1 and clone-2 share ssh-host-key (k)", Fix: "seal keys"},
		{Clone: "clone-1", Item: "machine-id", Step: StepReboot, Message: "changed", Fix: "keep it"}}
	sharedUUIDCause(fs)
	if !strings.HasSuffix(fs[0].Message, "share one firmware UUID (--firmware-uuid shared), and systemd fills an empty machine-id from it") ||
		!strings.Contains(fs[0].Fix, "firmware.uuid") || !strings.Contains(fs[0].Fix, "smbios1") {
		t.Errorf("machine-id failure %+v", fs[0])
	}
	if fs[1].Fix != "seal keys" || fs[2].Fix != "keep it" {
		t.Errorf("other failures changed: %+v", fs[1:])
	}
}
