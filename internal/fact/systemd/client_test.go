package systemd

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// fakeConn serves unit properties from maps.
type fakeConn struct {
	units    map[string]map[string]any // Unit interface, by unit name
	services map[string]map[string]any // Service interface, by unit name
	types    map[string]map[string]any // other type interfaces, by "unit/Type"
	manager  map[string]any            // Manager properties
	list     []sddbus.UnitStatus
	jobs     []sddbus.JobStatus
	err      error // returned by every call when set

	mu           sync.Mutex
	serviceCalls []string
	propCalls    []string
	getAllCalls  []string
	closed       int
}

func (f *fakeConn) GetUnitPropertiesContext(ctx context.Context, unit string) (map[string]any, error) {
	f.mu.Lock()
	f.getAllCalls = append(f.getAllCalls, unit)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	if p, ok := f.units[unit]; ok {
		return p, nil
	}
	// What systemd answers for a unit it cannot find.
	return map[string]any{"LoadState": "not-found", "ActiveState": "inactive", "SubState": "dead", "UnitFileState": ""}, nil
}

// GetUnitPropertyContext answers from the same map as GetUnitPropertiesContext
// and counts the calls; a property the map lacks is an error, as systemd's
// UnknownProperty is.
func (f *fakeConn) GetUnitPropertyContext(ctx context.Context, unit, name string) (*sddbus.Property, error) {
	f.mu.Lock()
	f.propCalls = append(f.propCalls, unit+"/"+name)
	f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	p, ok := f.units[unit]
	if !ok {
		return nil, godbus.Error{Name: "org.freedesktop.DBus.Error.UnknownObject"}
	}
	v, ok := p[name]
	if !ok {
		// Every unit has every Unit property; unset timestamps are 0.
		v = unitPropZero[name]
		if v == nil {
			return nil, godbus.Error{Name: "org.freedesktop.DBus.Error.UnknownProperty"}
		}
	}
	return &sddbus.Property{Name: name, Value: godbus.MakeVariant(v)}, nil
}

var unitPropZero = map[string]any{"After": []string{}, "InactiveExitTimestampMonotonic": uint64(0),
	"ActiveEnterTimestampMonotonic": uint64(0), "InactiveEnterTimestampMonotonic": uint64(0)}

func (f *fakeConn) GetUnitTypePropertiesContext(ctx context.Context, unit, unitType string) (map[string]any, error) {
	f.mu.Lock()
	f.serviceCalls = append(f.serviceCalls, unit+"/"+unitType)
	f.mu.Unlock()
	if p, ok := f.types[unit+"/"+unitType]; ok {
		return p, nil
	}
	return f.services[unit], nil
}

// GetManagerProperty answers as go-systemd does: the GVariant text form.
func (f *fakeConn) GetManagerProperty(prop string) (string, error) {
	if f.err != nil {
		return "", f.err
	}
	v, ok := f.manager[prop]
	if !ok {
		return "", godbus.Error{Name: "org.freedesktop.DBus.Error.UnknownProperty"}
	}
	return godbus.MakeVariant(v).String(), nil
}

func (f *fakeConn) ListUnitsContext(ctx context.Context) ([]sddbus.UnitStatus, error) {
	return f.list, f.err
}

func (f *fakeConn) ListJobsContext(ctx context.Context) ([]sddbus.JobStatus, error) {
	return f.jobs, f.err
}

func (f *fakeConn) Close() {
	f.mu.Lock()
	f.closed++
	f.mu.Unlock()
}

func (f *fakeConn) closeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// newTestClient returns a live Client whose run dir exists and whose dial is
// dial, so nothing depends on this machine's systemd.
func newTestClient(t *testing.T, dial func(context.Context) (conn, error)) *Client {
	t.Helper()
	c := New(true)
	c.runDir = t.TempDir()
	c.dial = dial
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func fakeDial(f *fakeConn, n *atomic.Int32) func(context.Context) (conn, error) {
	return func(context.Context) (conn, error) {
		if n != nil {
			n.Add(1)
		}
		return f, nil
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestNotLive(t *testing.T) {
	var dials atomic.Int32
	c := New(false)
	c.dial = fakeDial(&fakeConn{}, &dials)
	defer c.Close()
	_, err := c.Units(testCtx(t), "ssh.service")
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("err = %v, want ErrNotRunning", err)
	}
	if !strings.Contains(err.Error(), "--root is not the running system") {
		t.Errorf("err = %q, want the --root reason", err)
	}
	if dials.Load() != 0 {
		t.Errorf("dialled %d times, want 0", dials.Load())
	}
}

func TestNotBooted(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ runDir, reason string }{
		{filepath.Join(dir, "missing"), "not booted with systemd: " + filepath.Join(dir, "missing") + " is missing"},
		{file, "is not a directory"},
	} {
		var dials atomic.Int32
		c := newTestClient(t, fakeDial(&fakeConn{}, &dials))
		c.runDir = tc.runDir
		_, err := c.Units(testCtx(t), "ssh.service")
		if !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("runDir %s: err = %v, want ErrNotRunning with %q", tc.runDir, err, tc.reason)
		}
		if dials.Load() != 0 {
			t.Errorf("runDir %s: dialled %d times, want 0", tc.runDir, dials.Load())
		}
	}
}

func TestUnits(t *testing.T) {
	f := &fakeConn{
		units: map[string]map[string]any{
			"ssh.service": {"LoadState": "loaded", "ActiveState": "active", "SubState": "running", "UnitFileState": "enabled", "Id": "ssh.service"},
			"ssh.socket":  {"LoadState": "loaded", "ActiveState": "inactive", "SubState": "dead", "UnitFileState": "disabled"},
			"bad.service": {"LoadState": "loaded", "ActiveState": "failed", "SubState": "failed", "UnitFileState": "static"},
		},
		services: map[string]map[string]any{
			"ssh.service": {"NRestarts": uint32(2), "MainPID": uint32(4242)},
			"bad.service": {"NRestarts": uint32(5), "MainPID": uint32(0)},
		},
	}
	c := newTestClient(t, fakeDial(f, nil))
	got, err := c.Units(testCtx(t), "ssh.service", "ssh.socket", "nope.service", "bad.service")
	if err != nil {
		t.Fatal(err)
	}
	want := []UnitState{
		{Name: "ssh.service", LoadState: "loaded", ActiveState: "active", SubState: "running", UnitFileState: "enabled", NRestarts: 2, MainPID: 4242},
		{Name: "ssh.socket", LoadState: "loaded", ActiveState: "inactive", SubState: "dead", UnitFileState: "disabled"},
		{Name: "nope.service", LoadState: "not-found", ActiveState: "inactive", SubState: "dead"},
		{Name: "bad.service", LoadState: "loaded", ActiveState: "failed", SubState: "failed", UnitFileState: "static", NRestarts: 5},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d units, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("unit %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if got[2].Found() {
		t.Error("not-found unit: Found() = true")
	}
	if !got[0].Found() || got[0].Failed() || !got[3].Failed() {
		t.Error("Found/Failed wrong for loaded units")
	}
	// Service properties only for loaded .service units.
	if want := []string{"ssh.service/Service", "bad.service/Service"}; strings.Join(f.serviceCalls, ",") != strings.Join(want, ",") {
		t.Errorf("service calls = %v, want %v", f.serviceCalls, want)
	}
}

func TestCallErrors(t *testing.T) {
	for _, tc := range []struct {
		err        error
		notRunning bool
	}{
		{godbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"}, true},
		{godbus.Error{Name: "org.freedesktop.DBus.Error.NameHasNoOwner"}, true},
		{godbus.Error{Name: "org.freedesktop.DBus.Error.Spawn.ChildExited"}, true},
		{&godbus.Error{Name: "org.freedesktop.DBus.Error.Spawn.ExecFailed"}, true},
		{godbus.Error{Name: "org.freedesktop.DBus.Error.InvalidArgs"}, false},
		{godbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied"}, false},
		{errors.New("dbus: connection closed by user"), false},
	} {
		c := newTestClient(t, fakeDial(&fakeConn{err: tc.err}, nil))
		_, err := c.Units(testCtx(t), "x.service")
		if errors.Is(err, ErrNotRunning) != tc.notRunning {
			t.Errorf("%v: errors.Is(err, ErrNotRunning) = %v, want %v (err = %v)", tc.err, !tc.notRunning, tc.notRunning, err)
		}
		if !sameCause(err, tc.err) {
			t.Errorf("%v: cause lost: %v", tc.err, err)
		}
		if !strings.HasPrefix(err.Error(), "systemd: unit x.service: ") {
			t.Errorf("err = %q, want the unit name as context", err)
		}
	}
}

// sameCause is errors.Is that also matches godbus.Error, which holds a slice
// and so is not comparable.
func sameCause(err, cause error) bool {
	var want *godbus.Error
	if !errors.As(cause, &want) {
		var v godbus.Error
		if !errors.As(cause, &v) {
			return errors.Is(err, cause)
		}
		want = &v
	}
	var v godbus.Error
	if errors.As(err, &v) {
		return v.Name == want.Name
	}
	var p *godbus.Error
	return errors.As(err, &p) && p.Name == want.Name
}

func TestDialErrors(t *testing.T) {
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", errno)}
	}
	for _, tc := range []struct {
		err        error
		notRunning bool
	}{
		{opErr(syscall.ENOENT), true},
		{opErr(syscall.ECONNREFUSED), true},
		{opErr(syscall.EACCES), false},
		{errors.New("dbus: authentication failed"), false},
	} {
		c := newTestClient(t, func(context.Context) (conn, error) { return nil, tc.err })
		_, err := c.Units(testCtx(t), "x.service")
		if err == nil || errors.Is(err, ErrNotRunning) != tc.notRunning || !errors.Is(err, tc.err) {
			t.Errorf("dial error %v: got %v, want ErrNotRunning=%v wrapping the cause", tc.err, err, tc.notRunning)
		}
	}
}

// systemBusOnly is go-systemd's real system-bus dial without the root
// fallback to /run/systemd/private, which exists on machines that run systemd.
func systemBusOnly(ctx context.Context) (conn, error) {
	c, err := sddbus.NewSystemConnectionContext(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// TestRealDialErrors checks that godbus's own dial errors are classified,
// not just the ones built by hand above.
func TestRealDialErrors(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()

	for _, tc := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "missing"), fs.ErrNotExist},
		{stale, syscall.ECONNREFUSED},
	} {
		t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path="+tc.path)
		c := newTestClient(t, systemBusOnly)
		_, err := c.Units(testCtx(t), "x.service")
		if !errors.Is(err, ErrNotRunning) || !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want ErrNotRunning wrapping %v", tc.path, err, tc.want)
		}
	}
}

func TestDialBlocksForever(t *testing.T) {
	release := make(chan struct{})
	f := &fakeConn{}
	var dials atomic.Int32
	defer close(release)
	c := newTestClient(t, func(context.Context) (conn, error) {
		dials.Add(1)
		<-release // like go-systemd's dial, deaf to contexts
		return f, nil
	})

	for i := 0; i < 2; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		start := time.Now()
		_, err := c.Units(ctx, "x.service")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call %d: err = %v, want DeadlineExceeded", i, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("call %d returned after %v, long past its 100ms deadline", i, d)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("dialled %d times, want 1 (the pending dial is shared)", n)
	}

	// The abandoned dial finishes after Close: what it opened must be closed.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	release <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for f.closeCount() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("connection from the abandoned dial was never closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLazyConnectOnce(t *testing.T) {
	var dials atomic.Int32
	f := &fakeConn{units: map[string]map[string]any{"a.service": {"LoadState": "loaded"}}}
	c := newTestClient(t, func(ctx context.Context) (conn, error) {
		dials.Add(1)
		time.Sleep(20 * time.Millisecond) // let the callers pile up
		return f, nil
	})
	if n := dials.Load(); n != 0 {
		t.Fatalf("New dialled %d times, want 0", n)
	}
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Go(func() {
			_, err := c.Units(ctx, "a.service")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("dialled %d times, want 1", n)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if f.closeCount() != 1 {
		t.Errorf("conn closed %d times, want 1", f.closeCount())
	}
	if _, err := c.Units(ctx, "a.service"); err == nil {
		t.Error("Units after Close: want an error")
	}
}

func TestCloseBeforeUse(t *testing.T) {
	var dials atomic.Int32
	c := newTestClient(t, fakeDial(&fakeConn{}, &dials))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Units(testCtx(t), "x.service"); err == nil {
		t.Error("Units after Close: want an error")
	}
	if dials.Load() != 0 {
		t.Errorf("dialled %d times after Close, want 0", dials.Load())
	}
}

// TestDialOrder: as root the private socket first (one hop to PID 1, as
// systemctl does), the bus when it fails; other users the bus only.
func TestDialOrder(t *testing.T) {
	priv, bus := &fakeConn{}, &fakeConn{}
	var tried []string
	dials := func(perr, berr error) (func() (conn, error), func() (conn, error)) {
		tried = nil
		return func() (conn, error) {
				tried = append(tried, "private")
				if perr != nil {
					return nil, perr
				}
				return priv, nil
			}, func() (conn, error) {
				tried = append(tried, "bus")
				if berr != nil {
					return nil, berr
				}
				return bus, nil
			}
	}
	enoent := fs.ErrNotExist
	for _, tc := range []struct {
		root       bool
		perr, berr error
		want       conn
		tried      string
		errHas     string
	}{
		{root: true, want: priv, tried: "private"},
		{root: true, perr: enoent, want: bus, tried: "private bus"},
		{root: true, perr: enoent, berr: syscall.ECONNREFUSED, tried: "private bus", errHas: "private socket: file does not exist; system bus: connection refused"},
		{root: false, want: bus, tried: "bus"},
		{root: false, berr: syscall.ECONNREFUSED, tried: "bus", errHas: "system bus: connection refused"},
	} {
		p, b := dials(tc.perr, tc.berr)
		got, err := dialOrder(tc.root, p, b)
		if strings.Join(tried, " ") != tc.tried {
			t.Errorf("root %v, errors %v %v: tried %v, want %s", tc.root, tc.perr, tc.berr, tried, tc.tried)
		}
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("root %v: err = %v, want %q", tc.root, err, tc.errHas)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("root %v, errors %v %v: got %p %v, want %p", tc.root, tc.perr, tc.berr, got, err, tc.want)
		}
	}
}
