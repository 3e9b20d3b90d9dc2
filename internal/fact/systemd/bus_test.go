package systemd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	godbus "github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/prop"
)

// fakeManager serves the org.freedesktop.systemd1 methods the Inspector
// calls, with systemd's signatures.
type fakeManager struct{}

type listedUnit struct {
	Name, Description, LoadState, ActiveState, SubState, Followed string
	Path                                                          godbus.ObjectPath
	JobID                                                         uint32
	JobType                                                       string
	JobPath                                                       godbus.ObjectPath
}

type listedJob struct {
	ID                    uint32
	Unit, JobType, Status string
	JobPath, UnitPath     godbus.ObjectPath
}

func (fakeManager) ListUnits() ([]listedUnit, *godbus.Error) {
	return []listedUnit{
		{Name: "ssh.service", LoadState: "loaded", ActiveState: "active", SubState: "running", Path: "/org/freedesktop/systemd1/unit/ssh_2eservice", JobPath: "/"},
		{Name: "data.mount", LoadState: "loaded", ActiveState: "failed", SubState: "failed", Path: "/org/freedesktop/systemd1/unit/data_2emount", JobPath: "/"},
		{Name: "gone.service", LoadState: "not-found", ActiveState: "inactive", SubState: "dead", Path: "/org/freedesktop/systemd1/unit/gone_2eservice", JobPath: "/"},
	}, nil
}

func (fakeManager) ListJobs() ([]listedJob, *godbus.Error) {
	return []listedJob{{ID: 42, Unit: "cloud-final.service", JobType: "start", Status: "running",
		JobPath: "/org/freedesktop/systemd1/job/42", UnitPath: "/org/freedesktop/systemd1/unit/cloud_2dfinal_2eservice"}}, nil
}

func ro(v any) *prop.Prop { return &prop.Prop{Value: v, Emit: prop.EmitFalse} }

// serveSystemd claims org.freedesktop.systemd1 on the bus at addr and
// exports a manager and three units.
func serveSystemd(t *testing.T, addr string) {
	t.Helper()
	conn, err := godbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if reply, err := conn.RequestName("org.freedesktop.systemd1", godbus.NameFlagDoNotQueue); err != nil || reply != godbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("RequestName: %v %v", reply, err)
	}
	const mgr = godbus.ObjectPath("/org/freedesktop/systemd1")
	if err := conn.Export(fakeManager{}, mgr, "org.freedesktop.systemd1.Manager"); err != nil {
		t.Fatal(err)
	}
	if _, err := prop.Export(conn, mgr, prop.Map{"org.freedesktop.systemd1.Manager": {
		"SystemState": ro("degraded"), "Version": ro("252.38-1~deb12u1"), "KernelTimestamp": ro(uint64(1764583200000000)),
		"InitRDTimestampMonotonic": ro(uint64(0)), "UserspaceTimestampMonotonic": ro(uint64(1832000)),
		"FinishTimestampMonotonic": ro(uint64(15210000)), "NFailedUnits": ro(uint32(1)), "NJobs": ro(uint32(1)),
	}}); err != nil {
		t.Fatal(err)
	}
	unit := func(path, id, active string, after []string, enter uint64) map[string]*prop.Prop {
		return map[string]*prop.Prop{"Id": ro(id), "LoadState": ro("loaded"), "ActiveState": ro(active), "SubState": ro(active),
			"UnitFileState": ro("enabled"), "After": ro(after), "InactiveExitTimestampMonotonic": ro(enter - 500000),
			"ActiveEnterTimestampMonotonic": ro(enter), "ActiveExitTimestampMonotonic": ro(uint64(0)),
			"InactiveEnterTimestampMonotonic": ro(uint64(0)), "StateChangeTimestampMonotonic": ro(enter)}
	}
	for path, m := range map[godbus.ObjectPath]prop.Map{
		"/org/freedesktop/systemd1/unit/ssh_2eservice": {
			"org.freedesktop.systemd1.Unit":    unit("", "ssh.service", "active", []string{"network.target", "basic.target"}, 4500000),
			"org.freedesktop.systemd1.Service": {"Result": ro("success"), "NRestarts": ro(uint32(0)), "MainPID": ro(uint32(612))},
		},
		"/org/freedesktop/systemd1/unit/data_2emount": {
			"org.freedesktop.systemd1.Unit":  unit("", "data.mount", "failed", []string{"local-fs-pre.target"}, 0),
			"org.freedesktop.systemd1.Mount": {"Result": ro("exit-code")},
		},
		"/org/freedesktop/systemd1/unit/default_2etarget": {
			"org.freedesktop.systemd1.Unit": unit("", "graphical.target", "active", []string{"multi-user.target"}, 15200000),
		},
	} {
		if _, err := prop.Export(conn, path, m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInspectorOverBus drives the production client, through go-systemd
// and a real dbus-daemon, against a service with systemd's property
// signatures: the GVariant text of GetManagerProperty, the a(ssssssouso)
// of ListUnits and the types of the timestamps and After= must all decode.
func TestInspectorOverBus(t *testing.T) {
	addr := startBus(t)
	serveSystemd(t, addr)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	c := New(true)
	c.runDir = t.TempDir()
	c.dial = dialSystem(filepath.Join(t.TempDir(), "private")) // not this machine's systemd
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	st, err := c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SystemState != "degraded" || st.Version != "252.38-1~deb12u1" || st.UserspaceMonotonic != 1832000 ||
		st.FinishMonotonic != 15210000 || st.KernelTimestamp != 1764583200000000 || st.NFailedUnits != 1 || st.NJobs != 1 {
		t.Errorf("State = %+v", st)
	}
	js, err := c.Jobs(ctx)
	if err != nil || len(js) != 1 || js[0] != (Job{ID: 42, Unit: "cloud-final.service", Type: "start", State: "running"}) {
		t.Errorf("Jobs = %+v, %v", js, err)
	}
	us, err := c.LoadedUnits(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range us {
		names = append(names, u.Name)
	}
	if strings.Join(names, " ") != "data.mount ssh.service" {
		t.Fatalf("LoadedUnits = %v", names)
	}
	if us[0].Result != "exit-code" || !us[0].Failed() {
		t.Errorf("data.mount = %+v", us[0])
	}
	if us[1].Read != 0 || strings.Join(us[1].After, ",") != "network.target,basic.target" || us[1].Result != "" {
		t.Errorf("ssh.service = %+v", us[1])
	}
	ts, err := c.ReadTimes(ctx, map[string]TimeFields{"ssh.service": AllTimes, "data.mount": ActiveEnter})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Times{InactiveExitMono: 4000000, ActiveEnterMono: 4500000, Read: AllTimes}); ts["ssh.service"] != want {
		t.Errorf("ReadTimes ssh.service = %+v, want %+v", ts["ssh.service"], want)
	}
	if ts["data.mount"].Read != ActiveEnter || len(ts) != 2 {
		t.Errorf("ReadTimes = %+v", ts)
	}
	d, err := c.Unit(ctx, "default.target")
	if err != nil || d.ID != "graphical.target" {
		t.Errorf("Unit(default.target) = %+v, %v", d, err)
	}
	// Units (the Manager interface) still works on the same connection.
	u, err := c.Units(ctx, "ssh.service")
	if err != nil || len(u) != 1 || u[0].MainPID != 612 {
		t.Errorf("Units = %+v, %v", u, err)
	}
}
