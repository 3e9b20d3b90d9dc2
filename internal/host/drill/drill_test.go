package drill

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite schema/freeze-drill-v1.schema.json")

// childEnv makes the test binary a drill of the socket it names, for
// the SIGKILL test; GuardEnv makes it a guard.
const childEnv = "DRILL_TEST_CHILD"

// hangEnv makes it a drill that hangs past its guard's deadline.
const hangEnv = "DRILL_TEST_HANG"

func TestMain(m *testing.M) {
	if IsGuard() {
		os.Exit(RunGuard())
	}
	if sock := os.Getenv(hangEnv); sock != "" {
		// A drill that hangs with the guest frozen: it arms its guard
		// for a second from now and never thaws, nor exits.
		if _, err := startGuard(os.Args[0], "vm1", Reach{Socket: sock}, time.Now().Add(time.Second)); err != nil {
			os.Exit(2)
		}
		select {}
	}
	if sock := os.Getenv(childEnv); sock != "" {
		r := Run(context.Background(), []Target{socketTarget("vm1", sock)}, nil, Options{Deadline: 10 * time.Second, VMTimeout: time.Minute, Exe: os.Args[0]})
		json.NewEncoder(os.Stdout).Encode(r)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func socketTarget(name, path string) Target {
	ts, _ := fleet.SocketSource{{Name: name, Path: path}}.Targets(context.Background())
	return Target{Target: ts[0], Reach: Reach{Socket: path}}
}

// guestReport is guestcheck's JSON report whose fs-freeze check
// predicts order.
func guestReport(t *testing.T, order string) []byte {
	t.Helper()
	f := runner.New(runner.Pass, "fs-freeze-list-ok", "qemu-ga will freeze", map[string]string{"freeze_order": order, "source": "/proc/self/mountinfo"}, "")
	r := report.New([]runner.Result{{ID: "fs-freeze", Title: "Filesystem freeze", Status: runner.Pass, Summary: "ok", Findings: []runner.Finding{f}}},
		report.Meta{Tool: "guestcheck", Version: "1.0.0", StartedAt: time.Unix(1764417600, 0)})
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const (
	hookFreeze = "Mon Dec  7 16:00:00 UTC 2026: Executing /etc/qemu/fsfreeze-hook.d/db freeze\nflushing tables\nMon Dec  7 16:00:00 UTC 2026: /etc/qemu/fsfreeze-hook.d/db finished successfully\n"
	hookThaw   = "Mon Dec  7 16:00:01 UTC 2026: Executing /etc/qemu/fsfreeze-hook.d/db thaw\nMon Dec  7 16:00:01 UTC 2026: /etc/qemu/fsfreeze-hook.d/db finished successfully\n"
	hookFails  = "Mon Dec  7 16:00:00 UTC 2026: Executing /etc/qemu/fsfreeze-hook.d/db freeze\nMon Dec  7 16:00:00 UTC 2026: Error: /etc/qemu/fsfreeze-hook.d/db finished with status=3\n"
)

// healthy is a Debian guest with a root and a data disk, a hook that
// logs, and guestcheck installed.
func healthy(t *testing.T, order string) (*qgafake.Agent, *qgafake.Guest) {
	g := &qgafake.Guest{FS: []qgafake.FS{{Name: "vda", Mountpoint: "/", Type: "ext4"}, {Name: "vdb", Mountpoint: "/data", Type: "xfs"}},
		OSID: "debian", HookLog: DefaultHookLog, HookLines: hookFreeze, ThawLines: hookThaw}
	g.WriteFile(DefaultHookLog, []byte("Sun Dec  6 10:00:00 UTC 2026: Executing /etc/qemu/fsfreeze-hook.d/old freeze\nSun Dec  6 10:00:00 UTC 2026: Error: /etc/qemu/fsfreeze-hook.d/old finished with status=9\n"))
	rep := guestReport(t, order)
	a := &qgafake.Agent{Guest: g, Run: func(path string, args []string) qgafake.Program {
		if path != fleet.DefaultGuestcheckPath || !slices.Equal(args, []string{"--only", "fs-freeze", "--format", "json", "--exit-zero"}) {
			return qgafake.Program{StartError: qgafake.NotInstalled(path)}
		}
		return qgafake.Program{Stdout: rep}
	}}
	return a, g
}

// drill serves a on a socket and drills it once.
func drill(t *testing.T, a *qgafake.Agent, o Options) VM {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "vm1.qga")
	l, err := a.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	o.Exe = os.Args[0]
	r := Run(context.Background(), []Target{socketTarget("vm1", sock)}, nil, o)
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Render(&b, r, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f != FormatJSON {
			continue
		}
		if msg := testenv.Validate(testenv.Schema(t, "../../../schema", "freeze-drill-v1.schema.json"), b.Bytes()); msg != "" {
			t.Errorf("JSON output against schema/freeze-drill-v1.schema.json: %s", msg)
		}
	}
	if len(r.VMs) != 1 {
		t.Fatalf("%d VMs", len(r.VMs))
	}
	return r.VMs[0]
}

func TestHealthyDrill(t *testing.T) {
	a, g := healthy(t, "/data,/")
	vm := drill(t, a, Options{Deadline: 5 * time.Second})
	if vm.Status != Pass || !vm.Froze || vm.FrozenCount != 2 || vm.ThawedCount != 2 || vm.ThawedBy != "drill" || vm.StatusFrozen != "frozen" {
		t.Fatalf("%+v", vm)
	}
	if len(vm.FSBefore) != 2 || len(vm.FSAfter) != 2 || vm.Prediction.State != Agree {
		t.Errorf("fsinfo %v/%v, prediction %+v", vm.FSBefore, vm.FSAfter, vm.Prediction)
	}
	// Only this drill's lines: the old failure before it is not read.
	want := []HookScript{{"/etc/qemu/fsfreeze-hook.d/db", "freeze", "ok"}, {"/etc/qemu/fsfreeze-hook.d/db", "thaw", "ok"}}
	if vm.Hook.State != HookRan || !slices.Equal(vm.Hook.Scripts, want) {
		t.Errorf("hook %+v", vm.Hook)
	}
	if g.Frozen() || g.Thaws() != 1 {
		t.Errorf("frozen %v after the drill, %d thaws", g.Frozen(), g.Thaws())
	}
	if !strings.Contains(vm.Reason, "froze 2 filesystem(s) in") || !strings.Contains(vm.Reason, "the fsfreeze hook ran /etc/qemu/fsfreeze-hook.d/db (ok)") {
		t.Errorf("reason %q", vm.Reason)
	}
}

func TestAlreadyFrozenIsRefused(t *testing.T) {
	a, g := healthy(t, "/data,/")
	g.SetFrozen(true)
	vm := drill(t, a, Options{})
	if vm.Status != Unknown || !strings.HasPrefix(vm.Reason, "refused: the agent reports the guest frozen already") || vm.Fix == "" {
		t.Fatalf("%+v", vm)
	}
	if slices.Contains(a.Calls(), "guest-fsfreeze-freeze") || slices.Contains(a.Calls(), "guest-fsfreeze-thaw") || !g.Frozen() {
		t.Errorf("the drill touched a frozen guest: %v", a.Calls())
	}
}

func TestFreezeBlockedByTheFilter(t *testing.T) {
	for os, fix := range map[string]string{"debian": "block-rpcs in /etc/qemu/qemu-ga.conf", "rhel": "FILTER_RPC_ARGS of /etc/sysconfig/qemu-ga", "": "Debian and Ubuntu block RPCs"} {
		a, g := healthy(t, "/data,/")
		g.OSID = os
		a.Disabled = []string{"guest-fsfreeze-freeze"}
		vm := drill(t, a, Options{})
		if vm.Status != Unknown || !strings.Contains(vm.Reason, "the agent's RPC filter blocks guest-fsfreeze-freeze") || !strings.Contains(vm.Fix, fix) {
			t.Errorf("%s: %+v", os, vm)
		}
		if slices.Contains(a.Calls(), "guest-fsfreeze-freeze") {
			t.Errorf("%s: froze through a filter guest-info reports", os)
		}
	}
}

// An agent whose guest-info does not say, but whose freeze answers
// "disabled", is unknown too.
func TestFreezeRefusedAsDisabled(t *testing.T) {
	a, _ := healthy(t, "/data,/")
	a.Errors = map[string]*qga.Error{"guest-fsfreeze-freeze": {Class: "CommandNotFound", Desc: "Command guest-fsfreeze-freeze has been disabled"}}
	vm := drill(t, a, Options{})
	if vm.Status != Unknown || !strings.Contains(vm.Reason, "blocks guest-fsfreeze-freeze") || vm.Fix == "" {
		t.Fatalf("%+v", vm)
	}
}

func TestHookFailure(t *testing.T) {
	a, g := healthy(t, "/data,/")
	g.HookLines = hookFails
	g.HookError = &qga.Error{Class: "GenericError", Desc: "fsfreeze hook has failed with status 3"}
	vm := drill(t, a, Options{})
	if vm.Status != Fail || vm.Froze || !strings.Contains(vm.Reason, "the fsfreeze hook failed (GenericError: fsfreeze hook has failed with status 3): /etc/qemu/fsfreeze-hook.d/db freeze exit 3") {
		t.Fatalf("%+v", vm)
	}
	if vm.Hook.State != HookFailed || g.Frozen() {
		t.Errorf("hook %+v, frozen %v", vm.Hook, g.Frozen())
	}
}

func TestPastTheDeadline(t *testing.T) {
	a, g := healthy(t, "/data,/")
	g.FreezeTakes = 300 * time.Millisecond
	vm := drill(t, a, Options{Deadline: 100 * time.Millisecond})
	if vm.Status != Fail || !strings.Contains(vm.Reason, "past the 100ms deadline; the fsfreeze hook ran /etc/qemu/fsfreeze-hook.d/db (ok); thawed by the drill") || vm.FreezeMS < 300 {
		t.Fatalf("%+v", vm)
	}
	if g.Frozen() {
		t.Error("left frozen")
	}
}

func TestPredictionDisagrees(t *testing.T) {
	a, _ := healthy(t, "/data,/boot,/")
	vm := drill(t, a, Options{Deadline: 5 * time.Second})
	if vm.Status != Warn || vm.Prediction.State != Disagree || !strings.Contains(vm.Reason, "predicted 3 (/data, /boot, /) and the agent froze 2") {
		t.Fatalf("%+v", vm)
	}
}

func TestPredictionNotCompared(t *testing.T) {
	a, _ := healthy(t, "/data,/")
	a.Disabled = []string{"guest-exec", "guest-file-open"}
	vm := drill(t, a, Options{Deadline: 5 * time.Second})
	if vm.Status != Pass || vm.Prediction.State != NotCompared || !strings.Contains(vm.Prediction.Why, "guest-exec is disabled") {
		t.Fatalf("%+v", vm)
	}
	if vm.Hook.State != HookUnknown || !strings.Contains(vm.Hook.Why, "guest-file-open is disabled") {
		t.Errorf("hook %+v", vm.Hook)
	}
}

// A freeze that outlasts the drill's own time is handed to the guard,
// which waits for the freeze to finish and thaws.
func TestGuardThawsAFreezeThatHangs(t *testing.T) {
	a, g := healthy(t, "/data,/")
	g.FreezeTakes = 2 * time.Second
	vm := drill(t, a, Options{Deadline: time.Second, VMTimeout: 800 * time.Millisecond})
	if vm.Status != Fail || vm.ThawedBy != "guard" || !strings.Contains(vm.Reason, "guest-fsfreeze-freeze did not answer within 800ms") {
		t.Fatalf("%+v", vm)
	}
	if g.Frozen() {
		t.Error("left frozen")
	}
}

// The drill killed with SIGKILL while the guest is frozen: its guard,
// in a session of its own, sees the control pipe's EOF and thaws.
func TestGuardThawsAfterSIGKILL(t *testing.T) {
	a, g := healthy(t, "/data,/")
	g.SlowStatus = 5 * time.Second // the drill sits frozen in guest-fsfreeze-status
	sock := filepath.Join(t.TempDir(), "vm1.qga")
	l, err := a.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+sock)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, g.Frozen, "the drill to freeze")
	cmd.Process.Signal(syscall.SIGKILL)
	start := time.Now()
	waitFor(t, 30*time.Second, func() bool { return !g.Frozen() }, "the guard to thaw")
	t.Logf("thawed %s after the SIGKILL", time.Since(start))
	cmd.Wait() // returns once the guard, which shares stderr, exits
	if g.Thaws() != 1 || !strings.Contains(stderr.String(), "the drill ended without thawing; its guard thawed vm1 (2 filesystem(s))") {
		t.Errorf("%d thaws; stderr %q", g.Thaws(), stderr.String())
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within %s", what, d)
		}
	}
}

func TestParseHookLog(t *testing.T) {
	got := parseHookLog([]byte(hookFreeze + "Mon: Executing /x/slow freeze\n" + hookFails))
	want := []HookScript{{"/etc/qemu/fsfreeze-hook.d/db", "freeze", "ok"}, {"/x/slow", "freeze", "no result"}, {"/etc/qemu/fsfreeze-hook.d/db", "freeze", "exit 3"}}
	if !slices.Equal(got, want) {
		t.Errorf("%+v", got)
	}
	// Debian 12's hook (QEMU 7.2): other words, and a status for success.
	debian := "Mon Dec  7 16:00:00 UTC 2026: execute /etc/qemu/fsfreeze-hook.d/a freeze\n" +
		"Mon Dec  7 16:00:00 UTC 2026: /etc/qemu/fsfreeze-hook.d/a finished with status=0\n" +
		"Mon Dec  7 16:00:00 UTC 2026: execute /etc/qemu/fsfreeze-hook.d/b freeze\ncannot quiesce\n" +
		"Mon Dec  7 16:00:01 UTC 2026: /etc/qemu/fsfreeze-hook.d/b finished with status=3\n"
	got = parseHookLog([]byte(debian))
	want = []HookScript{{"/etc/qemu/fsfreeze-hook.d/a", "freeze", "ok"}, {"/etc/qemu/fsfreeze-hook.d/b", "freeze", "exit 3"}}
	if !slices.Equal(got, want) {
		t.Errorf("Debian 12: %+v", got)
	}
}

// A script that fails under a hook that exits 0 (Debian 12's): the
// freeze succeeds, and the log alone shows the failure.
func TestHookScriptFailsUnderAQuietHook(t *testing.T) {
	a, g := healthy(t, "/data,/")
	g.HookLines = "Mon Dec  7 16:00:00 UTC 2026: execute /etc/qemu/fsfreeze-hook.d/db freeze\nMon Dec  7 16:00:00 UTC 2026: /etc/qemu/fsfreeze-hook.d/db finished with status=3\n"
	vm := drill(t, a, Options{Deadline: 5 * time.Second})
	if vm.Status != Fail || !vm.Froze || vm.Hook.State != HookFailed || !strings.Contains(vm.Reason, "froze and thawed, but a hook script failed: /etc/qemu/fsfreeze-hook.d/db freeze exit 3") {
		t.Fatalf("%+v", vm)
	}
	if g.Frozen() {
		t.Error("left frozen")
	}
}

// A hostile guest: thousands of mounts, escapes in their names, a
// prediction with escapes. The report keeps the bound and no escape.
func TestHostileGuestIsBounded(t *testing.T) {
	a, g := healthy(t, "/\x1b[2J,/data")
	g.FS = nil
	for i := range 5000 {
		g.FS = append(g.FS, qgafake.FS{Name: "vd\x1b]0;x\x07", Mountpoint: "/m\x1b[31m" + strings.Repeat("x", i%10), Type: "ext4"})
	}
	vm := drill(t, a, Options{Deadline: 5 * time.Second})
	if len(vm.FSBefore) != maxFS || vm.FrozenCount != maxFS {
		t.Errorf("kept %d filesystems, frozen count %d; want the bound %d", len(vm.FSBefore), vm.FrozenCount, maxFS)
	}
	b, _ := json.Marshal(vm)
	if bytes.Contains(b, []byte(`\u001b`)) || bytes.Contains(b, []byte(`\u0007`)) {
		t.Errorf("a control character reached the report: %.300s", b)
	}
	if g.Frozen() {
		t.Error("left frozen")
	}
}

// A drill that hangs past its deadline holds the agent's one-client
// socket: its guard kills it, then thaws.
func TestGuardKillsADrillThatHangs(t *testing.T) {
	a, g := healthy(t, "/data,/")
	sock := filepath.Join(t.TempDir(), "vm1.qga")
	l, err := a.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g.SetFrozen(true) // as the hung drill left it
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), hangEnv+"="+sock)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Errorf("the hung drill ended with %v, not killed by its guard", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the guard did not kill the hung drill")
	}
	waitFor(t, 10*time.Second, func() bool { return !g.Frozen() }, "the guard to thaw")
	if !strings.Contains(stderr.String(), "the drill overran its deadline and was killed; its guard thawed vm1 (2 filesystem(s))") {
		t.Errorf("stderr %q", stderr.String())
	}
}

func osArgs0() string { return os.Args[0] }
