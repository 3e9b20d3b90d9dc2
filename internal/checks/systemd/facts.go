// Package systemdcheck is the systemd check: the system state with
// is-system-running semantics (a degraded system lists each failed unit,
// its result and the journalctl command that shows why), whether the boot
// finished and no start job is stuck, how long the boot took (kernel to
// userspace, userspace to cloud-final, the guest agent and sshd, judged
// against systemd.boot_budget, with the critical chain as
// systemd-analyze critical-chain computes it) and ordering cycles in the
// loaded unit graph and in this boot's journal. Facts come from systemd
// over D-Bus and from journalctl; judging is pure.
package systemdcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Facts is everything the systemd check judges.
type Facts struct {
	Live          bool
	NotLiveReason string

	// Err is set when systemd could not be asked at all (wrapping
	// systemd.ErrNotRunning when there is none).
	Err error

	State systemd.ManagerState
	Jobs  []systemd.Job
	// Units are all loaded units, by name. Their timestamps are read
	// where a verdict needs them (UnitInfo.Read): the critical chain's
	// walk (ChainNeeds), the milestones and the units of running jobs.
	Units map[string]systemd.UnitInfo
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
	f = Facts{Live: env.Live, Budget: config.DefaultBootBudget}
	if env.Config != nil && env.Config.Systemd.BootBudget > 0 {
		f.Budget = env.Config.Systemd.BootBudget
	}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
		return f
	}
	in, ok := env.Systemd.(systemd.Inspector)
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
	f.Units = make(map[string]systemd.UnitInfo, len(us))
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
func readTimes(ctx context.Context, in systemd.Inspector, f *Facts) error {
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
func TimeNeeds(f Facts) map[string]systemd.TimeFields {
	need := ChainNeeds(f.Units, f.DefaultTarget, f.State.UserspaceMonotonic, f.State.FinishMonotonic)
	if need == nil {
		need = map[string]systemd.TimeFields{}
	}
	add := func(name string, t systemd.TimeFields) {
		if u, ok := f.Units[name]; ok && u.Read&t != t {
			need[name] |= t &^ u.Read
		}
	}
	for _, names := range Milestones {
		for _, n := range names {
			add(n, systemd.ActiveEnter)
		}
	}
	for _, j := range f.Jobs {
		if j.State == "running" {
			add(j.Unit, systemd.InactiveExit)
		}
	}
	if len(need) == 0 {
		return nil
	}
	return need
}

// selfUnit is the unit named by the last component of this process's
// cgroup v2 path ("0::/system.slice/guestcheck.service"), or "".
func selfUnit(r *fs.Root) string {
	b, err := r.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	return ParseSelfUnit(string(b))
}

// ParseSelfUnit reads /proc/self/cgroup. With cgroup v1 the name=systemd
// hierarchy carries the same path.
func ParseSelfUnit(s string) string {
	for _, l := range strings.Split(s, "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 || (parts[1] != "" && parts[1] != "name=systemd") {
			continue
		}
		comps := strings.Split(parts[2], "/")
		for i := len(comps) - 1; i >= 0; i-- {
			c := comps[i]
			if strings.HasSuffix(c, ".service") || strings.HasSuffix(c, ".scope") {
				return c
			}
		}
	}
	return ""
}
