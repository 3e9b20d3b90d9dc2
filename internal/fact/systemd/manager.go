package systemd

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// Inspector answers the manager-wide questions of the systemd check: the
// system state, boot timestamps, jobs and every loaded unit with its
// activation timestamps and ordering. *Client implements it; Env.Systemd
// stays a Manager so that checks needing only unit states keep small fakes.
type Inspector interface {
	Manager
	// State returns the manager's properties.
	State(ctx context.Context) (ManagerState, error)
	// Jobs lists the queued jobs (systemctl list-jobs).
	Jobs(ctx context.Context) ([]Job, error)
	// Unit returns one unit, aliases resolved (Unit(ctx, "default.target")
	// has the real target's ID).
	Unit(ctx context.Context, name string) (UnitInfo, error)
	// LoadedUnits returns every loaded unit (systemctl list-units --all)
	// with its states, After= and, if it failed, its Result; none of its
	// timestamps (Read is 0): ReadTimes reads those a caller needs.
	LoadedUnits(ctx context.Context) ([]UnitInfo, error)
	// ReadTimes reads the asked activation timestamps of the named
	// units, one D-Bus Get per unit and timestamp.
	ReadTimes(ctx context.Context, want map[string]TimeFields) (map[string]Times, error)
}

var _ Inspector = (*Client)(nil)

// ManagerState is org.freedesktop.systemd1.Manager's state and boot
// timestamps. Monotonic timestamps are microseconds since the kernel
// started (CLOCK_MONOTONIC); 0 means "not reached".
type ManagerState struct {
	SystemState string // initializing, starting, running, degraded, maintenance, stopping, offline, unknown
	Version     string
	// KernelTimestamp is the realtime (µs since the epoch) of the kernel's start.
	KernelTimestamp uint64
	InitRDMonotonic uint64
	// UserspaceMonotonic is when systemd (PID 1) started: the end of the
	// kernel's (and initrd's) part of the boot.
	UserspaceMonotonic uint64
	// FinishMonotonic is when the boot transaction finished; 0 while the
	// boot is still in progress.
	FinishMonotonic uint64
	NFailedUnits    uint32
	NJobs           uint32
}

// Job is one queued job.
type Job struct {
	ID    uint32
	Unit  string
	Type  string // start, stop, restart, verify-active, ...
	State string // waiting or running
}

// UnitInfo is a unit with what systemd-analyze reads: activation
// timestamps (monotonic µs) and After= (which includes the inverse of
// other units' Before=). LoadedUnits leaves UnitFileState empty and the
// timestamps unread (see loadedUnitProps); Read says which were read.
type UnitInfo struct {
	UnitState
	ID                 string
	After              []string
	InactiveExitMono   uint64     // activation began
	ActiveEnterMono    uint64     // became active
	InactiveEnterMono  uint64     // deactivated (a oneshot without RemainAfterExit, a failure)
	Read               TimeFields // which of the three timestamps were read; an unread one is 0
	Result             string     // the unit type's Result (exit-code, timeout, ...), "" when it has none
	ResultFromProperty string     // which interface Result came from, for evidence
}

// TimeFields is a set of a unit's activation timestamps.
type TimeFields uint8

// The activation timestamps, as ReadTimes asks for them.
const (
	InactiveExit  TimeFields = 1 << iota // InactiveExitTimestampMonotonic
	ActiveEnter                          // ActiveEnterTimestampMonotonic
	InactiveEnter                        // InactiveEnterTimestampMonotonic

	AllTimes = InactiveExit | ActiveEnter | InactiveEnter
)

// timeProps maps each TimeFields bit to its Unit property.
var timeProps = []struct {
	f    TimeFields
	prop string
}{
	{InactiveExit, "InactiveExitTimestampMonotonic"},
	{ActiveEnter, "ActiveEnterTimestampMonotonic"},
	{InactiveEnter, "InactiveEnterTimestampMonotonic"},
}

// Times are the activation timestamps ReadTimes read of one unit.
type Times struct {
	InactiveExitMono, ActiveEnterMono, InactiveEnterMono uint64
	Read                                                 TimeFields
}

// WithTimes returns u with the timestamps t read added.
func (u UnitInfo) WithTimes(t Times) UnitInfo {
	if t.Read&InactiveExit != 0 {
		u.InactiveExitMono = t.InactiveExitMono
	}
	if t.Read&ActiveEnter != 0 {
		u.ActiveEnterMono = t.ActiveEnterMono
	}
	if t.Read&InactiveEnter != 0 {
		u.InactiveEnterMono = t.InactiveEnterMono
	}
	u.Read |= t.Read
	return u
}

var managerProps = []string{"SystemState", "Version", "KernelTimestamp", "InitRDTimestampMonotonic",
	"UserspaceTimestampMonotonic", "FinishTimestampMonotonic", "NFailedUnits", "NJobs"}

// State implements Inspector.
func (c *Client) State(ctx context.Context) (ManagerState, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return ManagerState{}, err
	}
	var m ManagerState
	for _, p := range managerProps {
		v, err := managerProperty(ctx, cn, p)
		if err != nil {
			return ManagerState{}, err
		}
		switch p {
		case "SystemState":
			m.SystemState, _ = v.(string)
		case "Version":
			m.Version, _ = v.(string)
		case "KernelTimestamp":
			m.KernelTimestamp, _ = v.(uint64)
		case "InitRDTimestampMonotonic":
			m.InitRDMonotonic, _ = v.(uint64)
		case "UserspaceTimestampMonotonic":
			m.UserspaceMonotonic, _ = v.(uint64)
		case "FinishTimestampMonotonic":
			m.FinishMonotonic, _ = v.(uint64)
		case "NFailedUnits":
			m.NFailedUnits, _ = v.(uint32)
		case "NJobs":
			m.NJobs, _ = v.(uint32)
		}
	}
	return m, nil
}

// managerProperty reads one Manager property. go-systemd's call takes no
// context and returns the value in GVariant text form, so it runs in a
// goroutine the caller can stop waiting for, and the text is parsed back.
func managerProperty(ctx context.Context, cn conn, name string) (any, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := cn.GetManagerProperty(name)
		ch <- res{s, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-ctx.Done():
		return nil, fmt.Errorf("systemd: manager property %s: %w", name, ctx.Err())
	}
	if r.err != nil {
		return nil, managerError(name, r.err)
	}
	v, err := godbus.ParseVariant(r.s, godbus.Signature{})
	if err != nil {
		return nil, fmt.Errorf("systemd: manager property %s: parse %q: %w", name, r.s, err)
	}
	return v.Value(), nil
}

func managerError(what string, err error) error {
	if notAnswering(err) {
		return fmt.Errorf("systemd: %s: %w: no systemd on the bus: %w", what, ErrNotRunning, err)
	}
	return fmt.Errorf("systemd: %s: %w", what, err)
}

// Jobs implements Inspector.
func (c *Client) Jobs(ctx context.Context) ([]Job, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	js, err := cn.ListJobsContext(ctx)
	if err != nil {
		return nil, managerError("list jobs", err)
	}
	out := make([]Job, 0, len(js))
	for _, j := range js {
		out = append(out, Job{ID: uint32(j.Id), Unit: j.Unit, Type: j.JobType, State: j.Status})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out, nil
}

// Unit implements Inspector.
func (c *Client) Unit(ctx context.Context, name string) (UnitInfo, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return UnitInfo{}, err
	}
	return unitInfo(ctx, cn, name)
}

// loadedUnitProps are the Unit properties LoadedUnits reads of each unit,
// with one Get each; the states come from ListUnits. The timestamps are
// left to ReadTimes: the critical chain needs them of a few dozen units,
// the ordering-cycle graph needs After= of every unit, and no Manager
// method returns either in bulk: ListUnits* return states and jobs only,
// and Dump's text, says org.freedesktop.systemd1(5), is for developers,
// not programs (no stability), and rate limited for unprivileged callers.
// Each Get is a round trip through PID 1 (and the dbus-daemon), which a
// TCG guest pays milliseconds for. Not GetAll: its
// UnitFileState getter makes PID 1 read the unit's file and scan every
// .wants and .requires directory for links to it, once per unit until the
// next daemon-reload. For the hundreds of units of a guest that is seconds
// of PID 1's time under emulation, the first time guestcheck runs in a boot
// (from cloud-init's runcmd, say), and PID 1 answers nobody else meanwhile:
// the cloud-init check's few unit queries then overran their 5 s deadline.
var loadedUnitProps = []string{"After"}

// workers is how many D-Bus calls LoadedUnits and ReadTimes keep in
// flight: each is one round trip and a guest has hundreds of units.
const workers = 4

// parallel runs do(i) for i in [0, n) on the workers and returns the
// first error by index.
func parallel(n int, do func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, n) {
		wg.Go(func() {
			for i := range next {
				errs[i] = do(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// LoadedUnits implements Inspector. The units are read by a few workers
// at once: a guest has hundreds and each property is one D-Bus round trip.
func (c *Client) LoadedUnits(ctx context.Context) ([]UnitInfo, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	us, err := cn.ListUnitsContext(ctx)
	if err != nil {
		return nil, managerError("list units", err)
	}
	// ListUnits lists each unit once, under its ID (aliases are left out).
	var listed []sddbus.UnitStatus
	for _, u := range us {
		if u.LoadState == "loaded" || u.ActiveState == "failed" {
			listed = append(listed, u)
		}
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].Name < listed[j].Name })
	out := make([]UnitInfo, len(listed))
	err = parallel(len(listed), func(i int) error {
		var err error
		out[i], err = loadedUnitInfo(ctx, cn, listed[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadTimes implements Inspector.
func (c *Client) ReadTimes(ctx context.Context, want map[string]TimeFields) (map[string]Times, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	type get struct {
		unit string
		f    TimeFields
		prop string
	}
	var gets []get
	for unit, fs := range want {
		for _, tp := range timeProps {
			if fs&tp.f != 0 {
				gets = append(gets, get{unit, tp.f, tp.prop})
			}
		}
	}
	vals := make([]uint64, len(gets))
	err = parallel(len(gets), func(i int) error {
		g := gets[i]
		v, err := cn.GetUnitPropertyContext(ctx, g.unit, g.prop)
		if err != nil {
			return callError(g.unit, err)
		}
		if v != nil {
			t, ok := v.Value.Value().(uint64)
			if !ok {
				return fmt.Errorf("systemd: unit %s: %s is %s, not a uint64", g.unit, g.prop, v.Value.Signature())
			}
			vals[i] = t
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Times, len(want))
	for i, g := range gets {
		t := out[g.unit]
		switch g.f {
		case InactiveExit:
			t.InactiveExitMono = vals[i]
		case ActiveEnter:
			t.ActiveEnterMono = vals[i]
		case InactiveEnter:
			t.InactiveEnterMono = vals[i]
		}
		t.Read |= g.f
		out[g.unit] = t
	}
	return out, nil
}

// resultInterfaces are the unit types whose D-Bus interface has Result.
var resultInterfaces = map[string]string{"service": "Service", "socket": "Socket", "mount": "Mount", "swap": "Swap",
	"timer": "Timer", "path": "Path", "automount": "Automount", "scope": "Scope"}

// loadedUnitInfo reads one listed unit's loadedUnitProps.
func loadedUnitInfo(ctx context.Context, cn conn, l sddbus.UnitStatus) (UnitInfo, error) {
	p := make(map[string]any, len(loadedUnitProps))
	for _, name := range loadedUnitProps {
		v, err := cn.GetUnitPropertyContext(ctx, l.Name, name)
		if err != nil {
			return UnitInfo{}, callError(l.Name, err)
		}
		if v != nil {
			p[name] = v.Value.Value()
		}
	}
	p["Id"], p["LoadState"], p["ActiveState"], p["SubState"] = l.Name, l.LoadState, l.ActiveState, l.SubState
	return withResult(ctx, cn, unitInfoFrom(l.Name, p))
}

func unitInfo(ctx context.Context, cn conn, name string) (UnitInfo, error) {
	p, err := cn.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return UnitInfo{}, callError(name, err)
	}
	u := unitInfoFrom(name, p)
	u.Read = AllTimes // GetAll has them all
	return withResult(ctx, cn, u)
}

func unitInfoFrom(name string, p map[string]any) UnitInfo {
	u := UnitInfo{
		UnitState: UnitState{Name: name, LoadState: str(p, "LoadState"), ActiveState: str(p, "ActiveState"),
			SubState: str(p, "SubState"), UnitFileState: str(p, "UnitFileState")},
		ID:                str(p, "Id"),
		InactiveExitMono:  u64(p, "InactiveExitTimestampMonotonic"),
		ActiveEnterMono:   u64(p, "ActiveEnterTimestampMonotonic"),
		InactiveEnterMono: u64(p, "InactiveEnterTimestampMonotonic"),
	}
	if u.ID == "" {
		u.ID = name
	}
	u.After, _ = p["After"].([]string)
	return u
}

// withResult adds a failed unit's Result from its type's interface.
func withResult(ctx context.Context, cn conn, u UnitInfo) (UnitInfo, error) {
	name := u.Name
	if u.Failed() {
		typ := name[strings.LastIndexByte(name, '.')+1:]
		if iface, ok := resultInterfaces[typ]; ok {
			tp, err := cn.GetUnitTypePropertiesContext(ctx, u.ID, iface)
			if err != nil {
				return UnitInfo{}, callError(name, err)
			}
			u.Result = str(tp, "Result")
			u.ResultFromProperty = "org.freedesktop.systemd1." + iface + ".Result"
		}
	}
	return u, nil
}

func u64(p map[string]any, k string) uint64 {
	v, _ := p[k].(uint64)
	return v
}
