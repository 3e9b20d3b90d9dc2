package systemd

import (
	"context"
	"errors"
	"math/bits"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

const s = uint64(1000000) // one second in µs

// unit builds a unit; activating 0 means it became active at once, as a
// target does (systemd sets InactiveExit and ActiveEnter together).
func unit(name, state string, activating, active uint64, after ...string) systemdfact.UnitInfo {
	if activating == 0 {
		activating = active
	}
	return systemdfact.UnitInfo{UnitState: systemdfact.UnitState{Name: name, LoadState: "loaded", ActiveState: state, SubState: "x"},
		ID: name, InactiveExitMono: activating, ActiveEnterMono: active, After: after}
}

// healthy is a Debian cloud guest's boot: kernel 2s, the boot finished
// 14s into userspace, ssh and the agent early, cloud-final last.
func healthy() Facts {
	us := map[string]systemdfact.UnitInfo{}
	for _, u := range []systemdfact.UnitInfo{
		unit("graphical.target", "active", 0, 16*s, "multi-user.target"),
		unit("multi-user.target", "active", 0, 16*s, "cloud-final.service", "ssh.service", "qemu-guest-agent.service", "basic.target"),
		unit("cloud-final.service", "active", 12*s, 16*s, "cloud-config.service", "network-online.target"),
		unit("cloud-config.service", "active", 9*s, 12*s, "cloud-init.service"),
		unit("cloud-init.service", "active", 5*s, 9*s, "systemd-networkd-wait-online.service", "basic.target"),
		unit("network-online.target", "active", 0, 7*s, "systemd-networkd-wait-online.service"),
		unit("systemd-networkd-wait-online.service", "active", 4*s, 7*s, "basic.target"),
		unit("ssh.service", "active", 5*s, 5*s+500000, "basic.target", "network.target"),
		unit("qemu-guest-agent.service", "active", 4*s, 4*s+200000, "basic.target"),
		unit("basic.target", "active", 0, 4*s, "sysinit.target"),
		unit("sysinit.target", "active", 0, 3*s),
		unit("network.target", "active", 0, 3*s+500000),
	} {
		us[u.Name] = u
	}
	return Facts{Live: true, Budget: 60 * time.Second, DefaultTarget: "graphical.target", NowMono: 120 * s,
		State: systemdfact.ManagerState{SystemState: "running", Version: "252", UserspaceMonotonic: 2 * s, FinishMonotonic: 16 * s},
		Units: us, Journal: JournalFacts{Visible: true, Entries: 3}}
}

func TestHealthy(t *testing.T) {
	out := Judge(healthy())
	validate(t, out)
	want(t, out, CodeRunning.ID, runner.Pass)
	want(t, out, CodeBootFinished.ID, runner.Pass, "14s after userspace")
	bt := want(t, out, CodeBootTime.ID, runner.Pass, "kernel 2s", "cloud-final.service +14s", "qemu-guest-agent.service +2.2s", "ssh.service +3.5s")
	// As systemd-analyze prints it: "@" is the start of activation when
	// it took time (cloud-final began at 10s and took 4s).
	wantChain := "graphical.target @14s\nmulti-user.target @14s\ncloud-final.service @10s +4s\ncloud-config.service @7s +3s\n" +
		"cloud-init.service @3s +4s\nsystemd-networkd-wait-online.service @2s +3s\nbasic.target @2s\nsysinit.target @1s"
	if diff := cmp.Diff(wantChain, bt.Detail["critical_chain"]); diff != "" {
		t.Errorf("critical chain (-want +got):\n%s", diff)
	}
	if bt.Detail["slowest_on_critical_chain"] != "cloud-final.service +4s, cloud-init.service +4s, cloud-config.service +3s, systemd-networkd-wait-online.service +3s" {
		t.Errorf("slowest = %q", bt.Detail["slowest_on_critical_chain"])
	}
	if bt.Detail["kernel_to_last_milestone"] != "16s (cloud-final.service)" && bt.Detail["kernel_to_last_milestone"] != "16s (the end of the boot)" {
		t.Errorf("kernel_to_last_milestone = %q", bt.Detail["kernel_to_last_milestone"])
	}
	want(t, out, CodeNoCycle.ID, runner.Pass, "12 loaded units")
}

func TestDegraded(t *testing.T) {
	f := healthy()
	f.State.SystemState = "degraded"
	f.State.NFailedUnits = 2
	bad := unit("data.mount", "failed", 3*s, 0)
	bad.Result, bad.ResultFromProperty = "exit-code", "org.freedesktop.systemd1.Mount.Result"
	f.Units["data.mount"] = bad
	svc := unit("app.service", "failed", 5*s, 0)
	svc.Result = "timeout"
	f.Units["app.service"] = svc
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeDegraded.ID, runner.Fail, "app.service (timeout), data.mount (exit-code)")
	var failed []string
	for _, x := range out {
		if x.Code == CodeUnitFailed.ID {
			failed = append(failed, x.Message+" | "+x.Detail["journal"])
			if !strings.Contains(x.Remediation, "`journalctl -b -u "+x.Detail["unit"]+"`") {
				t.Errorf("remediation %q lacks the journalctl command", x.Remediation)
			}
		}
	}
	if diff := cmp.Diff([]string{"app.service failed (result: timeout) | journalctl -b -u app.service",
		"data.mount failed (result: exit-code) | journalctl -b -u data.mount"}, failed); diff != "" {
		t.Errorf("failed units (-want +got):\n%s", diff)
	}
}

func TestOtherStates(t *testing.T) {
	for _, tc := range []struct {
		state, code string
		st          runner.Status
	}{{"maintenance", CodeMaintenance.ID, runner.Fail}, {"stopping", CodeStopping.ID, runner.Warn}, {"unknown", CodeUnreadable.ID, runner.Error}} {
		f := healthy()
		f.State.SystemState = tc.state
		out := Judge(f)
		validate(t, out)
		want(t, out, tc.code, tc.st, tc.state)
	}
}

func TestBootInProgress(t *testing.T) {
	// guestcheck.service at boot: the boot waits for this check only.
	f := healthy()
	f.State.SystemState, f.State.FinishMonotonic = "starting", 0
	f.Self = "guestcheck.service"
	f.NowMono = 30 * s
	f.Jobs = []systemdfact.Job{{ID: 1, Unit: "multi-user.target", Type: "start", State: "waiting"},
		{ID: 7, Unit: "guestcheck.service", Type: "start", State: "running"}}
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeBootInProgress.ID, runner.Pass, "only this check's own unit guestcheck.service")

	// Another job still running, within the budget: not finished yet.
	f.Jobs = append(f.Jobs, systemdfact.Job{ID: 9, Unit: "cloud-final.service", Type: "start", State: "running"})
	want(t, Judge(f), CodeBootInProgress.ID, runner.Warn, "1 job(s) running")

	// The same job, running for longer than the budget: stuck.
	f.NowMono = 200 * s
	cf := f.Units["cloud-final.service"]
	cf.ActiveEnterMono, cf.InactiveExitMono = 0, 12*s
	f.Units["cloud-final.service"] = cf
	out = Judge(f)
	validate(t, out)
	st := want(t, out, CodeJobStuck.ID, runner.Fail, "start job for cloud-final.service has been running for 3m8s")
	if st.Detail["age"] != "3m8s" {
		t.Errorf("age = %q", st.Detail["age"])
	}
}

func TestBootSlow(t *testing.T) {
	f := healthy()
	f.Budget = 10 * time.Second
	out := Judge(f)
	validate(t, out)
	want(t, out, CodeBootSlow.ID, runner.Warn, "the boot took 16s to", "over the 10s budget", "slowest on the critical chain: cloud-final.service +4s")
}

func TestCycles(t *testing.T) {
	f := healthy()
	f.Units["a.service"] = unit("a.service", "inactive", 0, 0, "b.service")
	f.Units["b.service"] = unit("b.service", "active", 1*s, 2*s, "c.service", "basic.target")
	f.Units["c.service"] = unit("c.service", "active", 1*s, 2*s, "a.service")
	f.Units["self.service"] = unit("self.service", "inactive", 0, 0, "self.service")
	out := Judge(f)
	validate(t, out)
	var got []string
	for _, x := range out {
		if x.Code == CodeCycle.ID {
			got = append(got, x.Message)
		}
	}
	if diff := cmp.Diff([]string{"ordering cycle: a.service, b.service, c.service", "ordering cycle: self.service"}, got); diff != "" {
		t.Errorf("cycles (-want +got):\n%s", diff)
	}
}

func TestCyclesLongChain(t *testing.T) {
	// A long linear chain must not overflow or report a cycle.
	us := map[string]systemdfact.UnitInfo{}
	prev := ""
	for i := range 20000 {
		n := "u" + strconv.Itoa(i) + ".service"
		if prev == "" {
			us[n] = unit(n, "active", 0, 1)
		} else {
			us[n] = unit(n, "active", 0, 1, prev)
		}
		prev = n
	}
	if c := Cycles(us); len(c) != 0 {
		t.Errorf("linear chain: %d cycles", len(c))
	}
	first := us["u0.service"]
	first.After = []string{prev}
	us["u0.service"] = first
	if c := Cycles(us); len(c) != 1 || len(c[0]) != 20000 {
		t.Errorf("closed chain: %d cycles", len(c))
	}
}

// fakeInspector serves Facts-shaped answers through the Inspector API, so
// Run's gathering is exercised end to end.
type fakeInspector struct {
	f   Facts
	err error
	// journal answers BootJournal: by the query's first argument.
	journal map[string][]systemdfact.JournalEntry
	// reads, when set, records the timestamps ReadTimes read per unit,
	// and gets, when set, counts them (one Get each).
	reads map[string]systemdfact.TimeFields
	gets  *int
}

func (i fakeInspector) BootJournal(ctx context.Context, args ...string) ([]systemdfact.JournalEntry, error) {
	if i.err != nil {
		return nil, i.err
	}
	return i.journal[args[0]], nil
}

func (i fakeInspector) Units(ctx context.Context, names ...string) ([]systemdfact.UnitState, error) {
	return nil, i.err
}
func (i fakeInspector) State(ctx context.Context) (systemdfact.ManagerState, error) {
	return i.f.State, i.err
}
func (i fakeInspector) Jobs(ctx context.Context) ([]systemdfact.Job, error) { return i.f.Jobs, i.err }
func (i fakeInspector) Unit(ctx context.Context, name string) (systemdfact.UnitInfo, error) {
	if name == "default.target" {
		return systemdfact.UnitInfo{ID: i.f.DefaultTarget}, i.err
	}
	return i.f.Units[name], i.err
}

// LoadedUnits answers as the real one does: no timestamps.
func (i fakeInspector) LoadedUnits(ctx context.Context) ([]systemdfact.UnitInfo, error) {
	var out []systemdfact.UnitInfo
	for _, u := range i.f.Units {
		u.InactiveExitMono, u.ActiveEnterMono, u.InactiveEnterMono, u.Read = 0, 0, 0, 0
		out = append(out, u)
	}
	return out, i.err
}

// ReadTimes serves the timestamps from f.Units and counts them in reads,
// when set, as the real one makes a Get of each.
func (i fakeInspector) ReadTimes(ctx context.Context, want map[string]systemdfact.TimeFields) (map[string]systemdfact.Times, error) {
	if i.err != nil {
		return nil, i.err
	}
	out := map[string]systemdfact.Times{}
	for name, fs := range want {
		u, ok := i.f.Units[name]
		if !ok {
			return nil, errors.New("no unit " + name)
		}
		out[name] = systemdfact.Times{InactiveExitMono: u.InactiveExitMono, ActiveEnterMono: u.ActiveEnterMono,
			InactiveEnterMono: u.InactiveEnterMono, Read: fs & systemdfact.AllTimes}
		if i.reads != nil {
			i.reads[name] |= fs
		}
		if i.gets != nil {
			*i.gets += bits.OnesCount8(uint8(fs & systemdfact.AllTimes))
		}
	}
	return out, nil
}

type unitsOnly struct{}

func (unitsOnly) Units(ctx context.Context, names ...string) ([]systemdfact.UnitState, error) {
	return nil, nil
}

func TestRun(t *testing.T) {
	root, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	cfg := config.Default()
	env := &runner.Env{Root: root, Live: true, Config: cfg, Systemd: fakeInspector{f: healthy()}}
	out := Run(context.Background(), env)
	validate(t, out)
	want(t, out, CodeRunning.ID, runner.Pass)
	want(t, out, CodeBootTime.ID, runner.Pass, "cloud-final.service +14s")
	// No journal answer at all: nothing of PID 1 visible, a skip.
	want(t, out, CodeJournalUnavailable.ID, runner.Skip, "no message of systemd (PID 1)")
	env.Systemd = fakeInspector{f: healthy(), journal: map[string][]systemdfact.JournalEntry{"-n": {entry("systemd 252 running in system mode")}}}
	want(t, Run(context.Background(), env), CodeJournalNoCycle.ID, runner.Pass)

	env.Systemd = fakeInspector{err: systemdfact.ErrNotRunning}
	want(t, Run(context.Background(), env), CodeNotRunning.ID, runner.Skip, "systemd is not running")
	env.Systemd = fakeInspector{err: errors.New("org.freedesktop.DBus.Error.AccessDenied")}
	want(t, Run(context.Background(), env), CodeUnreadable.ID, runner.Error, "cannot read systemd's state")
	env.Systemd = unitsOnly{}
	want(t, Run(context.Background(), env), CodeUnreadable.ID, runner.Error)
	env.Live = false
	want(t, Run(context.Background(), env), CodeNotLive.ID, runner.Skip)
}

// TestCycleOfDefaultDependencies is the cycle packaging/…/guestcheck.service
// avoids: on Debian cloud-final.service is ordered after
// multi-user.target, so a unit wanted by multi-user.target with default
// dependencies (multi-user.target After= it) and After=cloud-final.service
// closes a loop, and systemd drops a job at boot.
func TestCycleOfDefaultDependencies(t *testing.T) {
	f := healthy()
	mu := f.Units["multi-user.target"]
	mu.After = []string{"ssh.service", "qemu-guest-agent.service", "basic.target", "guestcheck.service"}
	f.Units["multi-user.target"] = mu
	cf := f.Units["cloud-final.service"]
	cf.After = append(cf.After, "multi-user.target")
	f.Units["cloud-final.service"] = cf
	f.Units["guestcheck.service"] = unit("guestcheck.service", "inactive", 0, 0, "cloud-final.service", "basic.target")
	out := JudgeCycles(f)
	validate(t, out)
	c := want(t, out, CodeCycle.ID, runner.Fail, "cloud-final.service, guestcheck.service, multi-user.target")
	if !strings.Contains(c.Remediation, "systemd-analyze verify cloud-final.service") {
		t.Errorf("remediation %q", c.Remediation)
	}
	// With DefaultDependencies=no, as the package ships it, there is none.
	mu.After = mu.After[:len(mu.After)-1]
	f.Units["multi-user.target"] = mu
	want(t, JudgeCycles(f), CodeNoCycle.ID, runner.Pass)
}

// validate and want are the assertions every area's tests share.
func validate(t *testing.T, fs []runner.Finding) {
	t.Helper()
	checktest.Conventions(t, fs, Codes)
}

func want(t *testing.T, fs []runner.Finding, code string, st runner.Status, subs ...string) runner.Finding {
	t.Helper()
	return checktest.Want(t, fs, code, st, subs...)
}
