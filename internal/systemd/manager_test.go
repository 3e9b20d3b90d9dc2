package systemd

import (
	"context"
	"errors"
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
	if us[1].ActiveEnterMono != 4500000 || us[1].InactiveExitMono != 4000000 || len(us[1].After) != 2 || us[1].Result != "" {
		t.Errorf("ssh.service = %+v", us[1])
	}
	d, err := c.Unit(testCtx(t), "default.target")
	if err != nil || d.ID != "graphical.target" {
		t.Errorf("Unit(default.target) = %+v, %v", d, err)
	}
}

// TestLoadedUnitsWithoutGetAll holds LoadedUnits to single-property Gets:
// a GetAll of the Unit interface makes systemd compute UnitFileState, a
// scan of every .wants directory per unit, and PID 1 answers nobody else
// while it does (see loadedUnitProps).
func TestLoadedUnitsWithoutGetAll(t *testing.T) {
	f := &fakeConn{
		list: []sddbus.UnitStatus{{Name: "ssh.service", LoadState: "loaded", ActiveState: "active", SubState: "running"},
			{Name: "gc-false.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed"}},
		units: map[string]map[string]any{
			"ssh.service": {"After": []string{"network.target"}, "InactiveExitTimestampMonotonic": uint64(4000000),
				"ActiveEnterTimestampMonotonic": uint64(4500000)},
			"gc-false.service": {"InactiveExitTimestampMonotonic": uint64(7000000), "InactiveEnterTimestampMonotonic": uint64(7100000)},
		},
		types: map[string]map[string]any{"gc-false.service/Service": {"Result": "exit-code"}},
	}
	c := newTestClient(t, fakeDial(f, nil))
	us, err := c.LoadedUnits(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	getAll, props := f.getAllCalls, len(f.propCalls)
	f.mu.Unlock()
	if len(getAll) != 0 {
		t.Errorf("LoadedUnits called GetAll on the Unit interface of %v", getAll)
	}
	if want := 2 * len(loadedUnitProps); props != want {
		t.Errorf("LoadedUnits made %d property Gets, want %d", props, want)
	}
	want := []UnitInfo{
		{UnitState: UnitState{Name: "gc-false.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed"}, ID: "gc-false.service",
			After: []string{}, InactiveExitMono: 7000000, InactiveEnterMono: 7100000, Result: "exit-code",
			ResultFromProperty: "org.freedesktop.systemd1.Service.Result"},
		{UnitState: UnitState{Name: "ssh.service", LoadState: "loaded", ActiveState: "active", SubState: "running"}, ID: "ssh.service",
			After: []string{"network.target"}, InactiveExitMono: 4000000, ActiveEnterMono: 4500000},
	}
	if diff := cmp.Diff(want, us); diff != "" {
		t.Errorf("LoadedUnits (-want +got):\n%s", diff)
	}
}
