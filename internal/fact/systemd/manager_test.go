package systemd

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
	"github.com/google/go-cmp/cmp"
)

func TestState(t *testing.T) {
	f := &fakeConn{manager: map[string]any{
		"SystemState": "degraded", "Version": "252.38-1~deb12u1", "KernelTimestamp": uint64(1764583200000000),
		"InitRDTimestampMonotonic": uint64(0), "UserspaceTimestampMonotonic": uint64(1832000),
		"FinishTimestampMonotonic": uint64(15210000), "NFailedUnits": uint32(2), "NJobs": uint32(0),
	}}
	c := newTestClient(t, fakeDial(f, nil))
	got, err := c.State(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := ManagerState{SystemState: "degraded", Version: "252.38-1~deb12u1", KernelTimestamp: 1764583200000000,
		UserspaceMonotonic: 1832000, FinishMonotonic: 15210000, NFailedUnits: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("State (-want +got):\n%s", diff)
	}
}

func TestStateNoSystemd(t *testing.T) {
	f := &fakeConn{err: godbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"}}
	c := newTestClient(t, fakeDial(f, nil))
	if _, err := c.State(testCtx(t)); !errors.Is(err, ErrNotRunning) {
		t.Errorf("State err = %v, want ErrNotRunning", err)
	}
	if _, err := c.Jobs(testCtx(t)); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Jobs err = %v, want ErrNotRunning", err)
	}
}

// blockingConn never answers GetManagerProperty, as a wedged bus would.
type blockingConn struct{ fakeConn }

func (b *blockingConn) GetManagerProperty(string) (string, error) { select {} }

func TestStateHonoursDeadline(t *testing.T) {
	c := newTestClient(t, func(context.Context) (conn, error) { return &blockingConn{}, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := c.State(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("State took %v after its deadline", d)
	}
}

func TestJobsAndUnits(t *testing.T) {
	f := &fakeConn{
		jobs: []sddbus.JobStatus{{Id: 9, Unit: "cloud-final.service", JobType: "start", Status: "running"},
			{Id: 3, Unit: "multi-user.target", JobType: "start", Status: "waiting"}},
		list: []sddbus.UnitStatus{{Name: "ssh.service", LoadState: "loaded"}, {Name: "gone.service", LoadState: "not-found"},
			{Name: "data.mount", LoadState: "loaded", ActiveState: "failed"}},
		units: map[string]map[string]any{
			"ssh.service": {"Id": "ssh.service", "LoadState": "loaded", "ActiveState": "active", "SubState": "running",
				"After": []string{"network.target", "basic.target"}, "InactiveExitTimestampMonotonic": uint64(4000000),
				"ActiveEnterTimestampMonotonic": uint64(4500000)},
			"data.mount":     {"Id": "data.mount", "LoadState": "loaded", "ActiveState": "failed", "SubState": "failed"},
			"default.target": {"Id": "graphical.target", "LoadState": "loaded", "ActiveState": "active"},
		},
		types: map[string]map[string]any{"data.mount/Mount": {"Result": "exit-code"}},
	}
	c := newTestClient(t, fakeDial(f, nil))
	js, err := c.Jobs(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Job{{3, "multi-user.target", "start", "waiting"}, {9, "cloud-final.service", "start", "running"}}, js); diff != "" {
		t.Errorf("Jobs (-want +got):\n%s", diff)
	}
	us, err := c.LoadedUnits(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 2 || us[0].Name != "data.mount" || us[1].Name != "ssh.service" {
		t.Fatalf("LoadedUnits = %+v, want data.mount and ssh.service (not-found units left out)", us)
	}
	if us[0].Result != "exit-code" || us[0].ResultFromProperty != "org.freedesktop.systemd1.Mount.Result" {
		t.Errorf("failed mount result = %q from %q", us[0].Result, us[0].ResultFromProperty)
	}
	if len(us[1].After) != 2 || us[1].Result != "" || us[1].Read != 0 {
		t.Errorf("ssh.service = %+v", us[1])
	}
	d, err := c.Unit(testCtx(t), "default.target")
	if err != nil || d.ID != "graphical.target" {
		t.Errorf("Unit(default.target) = %+v, %v", d, err)
	}
}

// TestLoadedUnitsRoundTrips holds LoadedUnits to one Get per unit (its
// After=) and ReadTimes to one Get per asked timestamp. Reading every
// timestamp of every unit was three quarters of the systemd check's
// D-Bus round trips, seconds in a TCG guest. And never a GetAll of the
// Unit interface: it makes systemd compute UnitFileState, a scan of every
// .wants directory per unit, and PID 1 answers nobody else while it does
// (see loadedUnitProps).
func TestLoadedUnitsRoundTrips(t *testing.T) {
	f := &fakeConn{
		list: []sddbus.UnitStatus{{Name: "ssh.service", LoadState: "loaded", ActiveState: "active", SubState: "running"},
			{Name: "gc-false.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed"},
			{Name: "basic.target", LoadState: "loaded", ActiveState: "active", SubState: "active"}},
		units: map[string]map[string]any{
			"ssh.service": {"After": []string{"network.target"}, "InactiveExitTimestampMonotonic": uint64(4000000),
				"ActiveEnterTimestampMonotonic": uint64(4500000)},
			"gc-false.service": {"InactiveExitTimestampMonotonic": uint64(7000000), "InactiveEnterTimestampMonotonic": uint64(7100000)},
			"basic.target":     {"After": []string{"sysinit.target"}},
		},
		types: map[string]map[string]any{"gc-false.service/Service": {"Result": "exit-code"}},
	}
	c := newTestClient(t, fakeDial(f, nil))
	us, err := c.LoadedUnits(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	getAll, props, types := f.getAllCalls, slices.Clone(f.propCalls), f.serviceCalls
	f.propCalls = nil
	f.mu.Unlock()
	if len(getAll) != 0 {
		t.Errorf("LoadedUnits called GetAll on the Unit interface of %v", getAll)
	}
	sort.Strings(props)
	if want := []string{"basic.target/After", "gc-false.service/After", "ssh.service/After"}; !slices.Equal(props, want) {
		t.Errorf("LoadedUnits made the Gets %v, want one per unit: %v", props, want)
	}
	if want := []string{"gc-false.service/Service"}; !slices.Equal(types, want) {
		t.Errorf("LoadedUnits read the type interfaces %v, want %v (the failed unit's only)", types, want)
	}
	want := []UnitInfo{
		{UnitState: UnitState{Name: "basic.target", LoadState: "loaded", ActiveState: "active", SubState: "active"}, ID: "basic.target",
			After: []string{"sysinit.target"}},
		{UnitState: UnitState{Name: "gc-false.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed"}, ID: "gc-false.service",
			After: []string{}, Result: "exit-code", ResultFromProperty: "org.freedesktop.systemd1.Service.Result"},
		{UnitState: UnitState{Name: "ssh.service", LoadState: "loaded", ActiveState: "active", SubState: "running"}, ID: "ssh.service",
			After: []string{"network.target"}},
	}
	if diff := cmp.Diff(want, us); diff != "" {
		t.Errorf("LoadedUnits (-want +got):\n%s", diff)
	}

	ts, err := c.ReadTimes(testCtx(t), map[string]TimeFields{"ssh.service": ActiveEnter | InactiveExit, "gc-false.service": InactiveEnter})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	props = slices.Clone(f.propCalls)
	f.mu.Unlock()
	sort.Strings(props)
	if want := []string{"gc-false.service/InactiveEnterTimestampMonotonic", "ssh.service/ActiveEnterTimestampMonotonic",
		"ssh.service/InactiveExitTimestampMonotonic"}; !slices.Equal(props, want) {
		t.Errorf("ReadTimes made the Gets %v, want %v", props, want)
	}
	wantTimes := map[string]Times{"ssh.service": {InactiveExitMono: 4000000, ActiveEnterMono: 4500000, Read: ActiveEnter | InactiveExit},
		"gc-false.service": {InactiveEnterMono: 7100000, Read: InactiveEnter}}
	if diff := cmp.Diff(wantTimes, ts); diff != "" {
		t.Errorf("ReadTimes (-want +got):\n%s", diff)
	}
	got := us[2].WithTimes(ts["ssh.service"])
	if got.ActiveEnterMono != 4500000 || got.InactiveExitMono != 4000000 || got.InactiveEnterMono != 0 || got.Read != ActiveEnter|InactiveExit {
		t.Errorf("WithTimes = %+v", got)
	}
}

func TestReadTimesErrors(t *testing.T) {
	f := &fakeConn{units: map[string]map[string]any{"odd.service": {"ActiveEnterTimestampMonotonic": "yesterday"}}}
	c := newTestClient(t, fakeDial(f, nil))
	if _, err := c.ReadTimes(testCtx(t), map[string]TimeFields{"odd.service": ActiveEnter}); err == nil || !strings.Contains(err.Error(), "not a uint64") {
		t.Errorf("err = %v, want a type error", err)
	}
	if _, err := c.ReadTimes(testCtx(t), map[string]TimeFields{"gone.service": ActiveEnter}); err == nil || !strings.Contains(err.Error(), "gone.service") {
		t.Errorf("err = %v, want an error naming the unit", err)
	}
	f = &fakeConn{err: godbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"}}
	c = newTestClient(t, fakeDial(f, nil))
	if _, err := c.ReadTimes(testCtx(t), map[string]TimeFields{"ssh.service": AllTimes}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("err = %v, want ErrNotRunning", err)
	}
	if ts, err := c.ReadTimes(testCtx(t), nil); err != nil || len(ts) != 0 {
		t.Errorf("ReadTimes(nil) = %v, %v", ts, err)
	}
}
