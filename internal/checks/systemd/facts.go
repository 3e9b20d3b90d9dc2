// Package systemd is the systemd check: the system state with
// is-system-running semantics (a degraded system lists each failed unit,
// its result and the journalctl command that shows why), whether the boot
// finished and no start job is stuck, how long the boot took (kernel to
// userspace, userspace to cloud-final, the guest agent and sshd, judged
// against systemd.boot_budget, with the critical chain as
// systemd-analyze critical-chain computes it) and ordering cycles in the
// loaded unit graph and in this boot's journal. Facts come from systemd
// over D-Bus and from journalctl; judging is pure.
package systemd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/cgroup"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Facts is everything the systemd check judges.
type Facts struct {
	Live          bool
	NotLiveReason string

	// Err is set when systemd could not be asked at all (wrapping
	// systemdfact.ErrNotRunning when there is none).
	Err error

	State systemdfact.ManagerState
	Jobs  []systemdfact.Job
	// Units are all loaded units, by name. Their timestamps are read
	// where a verdict needs them (UnitInfo.Read): the critical chain's
	// walk (ChainNeeds), the milestones and the units of running jobs.
	Units map[string]systemdfact.UnitInfo
	// UnitsErr is set when the unit list could not be read; the state
	// and jobs may still be judged.
	UnitsErr error
	// DefaultTarget is default.target's real name, the chain's start.
	DefaultTarget string

	// NowMono is CLOCK_MONOTONIC in µs when the facts were read.
	NowMono uint64
	// Self is the unit this process runs in (from /proc/self/cgroup):
	// guestcheck.service at boot, cloud-final.service from runcmd. Its
	// own job is not a stuck boot.
	Self string

	Budget time.Duration

	// Journal is what this boot's journal says about ordering cycles.
	Journal JournalFacts
}

// Gather reads the facts from systemd.
func Gather(ctx context.Context, env *runner.Env) (f Facts) {
	f = Facts{Live: env.Live, Budget: settings.Of(env.Config).BootBudget}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
		return f
	}
	in, ok := env.Systemd.(systemdfact.Inspector)
	if !ok {
		f.Err = errors.New("the systemd client cannot read manager state")
		return f
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err == nil {
		f.NowMono = uint64(ts.Nano() / 1000)
	}
	f.Self = selfUnit(env.Root)
	if f.State, f.Err = in.State(ctx); f.Err != nil {
		return f
	}
	if f.Jobs, f.Err = in.Jobs(ctx); f.Err != nil {
		return f
	}
	// journalctl runs beside the unit reads, which take seconds in a
	// slow guest.
	jc := make(chan JournalFacts, 1)
	go func() { jc <- gatherJournal(ctx, env) }()
	defer func() { f.Journal = <-jc }()
	us, err := in.LoadedUnits(ctx)
	if err != nil {
		f.UnitsErr = err
		return f
	}
	f.Units = make(map[string]systemdfact.UnitInfo, len(us))
	for _, u := range us {
		f.Units[u.Name] = u
	}
	if d, err := in.Unit(ctx, "default.target"); err == nil {
		f.DefaultTarget = d.ID
	}
	if err := readTimes(ctx, in, &f); err != nil {
		f.UnitsErr = err
	}
	return f
}

// readTimes reads the timestamps the verdicts need, a batch per step of
// the critical chain. Each batch reads at least one timestamp not read
// before, so the loop ends.
func readTimes(ctx context.Context, in systemdfact.Inspector, f *Facts) error {
	need := TimeNeeds(*f)
	for len(need) > 0 {
		ts, err := in.ReadTimes(ctx, need)
		if err != nil {
			return err
		}
		progress := false
		for name, t := range ts {
			u, ok := f.Units[name]
			if !ok || t.Read&^u.Read == 0 {
				continue
			}
			f.Units[name] = u.WithTimes(t)
			progress = true
		}
		if !progress {
			return fmt.Errorf("systemd: the timestamps asked of %d unit(s) were not read", len(need))
		}
		need = ChainNeeds(f.Units, f.DefaultTarget, f.State.UserspaceMonotonic, f.State.FinishMonotonic)
	}
	return nil
}

// TimeNeeds is every timestamp the verdicts need that is not read yet:
// ChainNeeds, and the milestones' activations (JudgeBootTime) and when
// each running job's unit began activating (JudgeBoot).
func TimeNeeds(f Facts) map[string]systemdfact.TimeFields {
	need := ChainNeeds(f.Units, f.DefaultTarget, f.State.UserspaceMonotonic, f.State.FinishMonotonic)
	if need == nil {
		need = map[string]systemdfact.TimeFields{}
	}
	add := func(name string, t systemdfact.TimeFields) {
		if u, ok := f.Units[name]; ok && u.Read&t != t {
			need[name] |= t &^ u.Read
		}
	}
	for _, names := range Milestones {
		for _, n := range names {
			add(n, systemdfact.ActiveEnter)
		}
	}
	for _, j := range f.Jobs {
		if j.State == "running" {
			add(j.Unit, systemdfact.InactiveExit)
		}
	}
	if len(need) == 0 {
		return nil
	}
	return need
}

// selfUnit is the unit this process runs in, from its cgroup
// ("0::/system.slice/guestcheck.service"), or "" when it cannot be told:
// without it the check's own job would count as a boot still running.
func selfUnit(r *fs.Root) string {
	b, err := r.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	// A malformed line hides nothing the other lines say.
	es, _ := cgroup.Parse(b)
	return cgroup.Unit(es)
}
