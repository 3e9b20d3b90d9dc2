package cloudinit

import (
	"context"
	"errors"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Facts is everything the cloud-init check judges, gathered once through
// runner.Env (Gather) so that Judge is a pure function of it and tests can
// build one without a filesystem.
type Facts struct {
	// Snap is what was read from the root. Snap.Inputs.Units holds the
	// units systemd reported (nil when it was not asked).
	Snap *Snapshot
	// UnitsNote says why the units were not queried ("not queried: ...",
	// "systemd not running", "query failed: ..."); "" when they were.
	UnitsNote string
	// Live is true when the root is the running system; NotLiveReason is
	// the skip message when it is not.
	Live          bool
	NotLiveReason string
	// Inside is true when cloud-init started this process; Via says
	// through what (see Inside). Only looked for on the live system.
	Inside bool
	Via    string
	// IsRoot is true when guestcheck runs as root (Env.IsRoot).
	IsRoot bool
	// Required is the config's cloud_init.required.
	Required bool
	// Display renders a guest path for messages (fs.Reader.Display); nil
	// shows it as it is.
	Display func(string) string
}

// show renders guest path p for a message.
func (f Facts) show(p string) string {
	if f.Display == nil {
		return p
	}
	return f.Display(p)
}

// Gather reads the root, asks systemd for cloud-init's units and walks
// the process tree. Its only error is an interrupted ctx: everything else
// that cannot be read is a fact to judge.
func Gather(ctx context.Context, env *runner.Env) (Facts, error) {
	now := env.Now
	if now == nil {
		now = time.Now
	}
	f := Facts{
		Live:     env.Live,
		IsRoot:   env.IsRoot,
		Required: settings.Of(env.Config).Required,
		Display:  env.Root.Display,
		Snap:     Read(env.Root, ReadOptions{Live: env.Live, Now: now}),
	}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
	}
	units, note, err := queryUnits(ctx, env)
	if err != nil {
		return Facts{}, err
	}
	f.Snap.Inputs.Units, f.UnitsNote = units, note
	if env.Live {
		// Only the running system's process tree says who started us.
		f.Inside, f.Via = Inside(env.Facts, env.Root)
	}
	return f, nil
}

// queryUnits asks systemd for cloud-init's units. No systemd is not an
// error: the note says so and unit rules are skipped, as cloud-init skips
// them. Only an interrupted context is returned as an error.
func queryUnits(ctx context.Context, env *runner.Env) ([]systemd.UnitState, string, error) {
	switch {
	case !env.Live:
		return nil, "not queried: " + env.NotLiveReason(), nil
	case env.Systemd == nil:
		return nil, "not queried: no systemd client", nil
	}
	us, err := env.Systemd.Units(ctx, judgedUnits()...)
	switch {
	case err == nil:
		return us, "", nil
	case errors.Is(err, systemd.ErrNotRunning):
		return nil, "systemd not running", nil
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	}
	return nil, "query failed: " + problem.OneLine(err.Error()), nil
}
