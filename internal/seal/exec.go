package seal

import (
	"context"
	"errors"
	"fmt"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Live performs the steps that only exist on the running system. The
// executor calls it only for actions planned in live mode; tests inject a
// fake so that no test stops a unit or powers anything off.
type Live interface {
	StopUnit(ctx context.Context, name string) error
	RelinquishJournal(ctx context.Context) error
	RunHook(ctx context.Context, path string) error
}

// ResultStatus is the outcome of one action.
type ResultStatus string

// The outcomes. The zero value is not a success.
const (
	Done      ResultStatus = "done"      // the action changed something
	Unchanged ResultStatus = "unchanged" // already in the planned state
	Failed    ResultStatus = "failed"
	Planned   ResultStatus = "planned" // plan and verify: not attempted
	// Warn is verify's status for a tidy action (Action.Tidy): not done,
	// but no identity either.
	Warn ResultStatus = "warn"
)

// Result is one action and what became of it.
type Result struct {
	Action
	Status ResultStatus `json:"status"`
	Detail string       `json:"detail,omitempty"`
	Error  string       `json:"error,omitempty"`
}

// Executor is the only code that changes the guest root.
type Executor struct {
	Root *fs.Confined
	// Live runs live-only actions; nil makes them fail.
	Live Live
	// Progress hears about every action as it runs (sealprep shows it on
	// stderr); nil is silent.
	Progress Progress
}

// Progress is told what Apply is doing, for a person or a build log to
// follow. It is called from Apply's goroutine, twice per action, so it
// must be cheap; it never changes what Apply does.
type Progress interface {
	// Begin comes once, before anything runs, with every action of the
	// run (Start and Finish index into it).
	Begin(acts []Action)
	// Start comes just before action i runs.
	Start(i int, a Action)
	// Finish comes when action i has ended, with its result.
	Finish(i int, r Result)
	// End comes once, last, after the changed filesystems were synced.
	End(e ApplyEnd)
}

// ApplyEnd is how an Apply run ended, for Progress.End.
type ApplyEnd struct {
	// NotAttempted counts the actions skipped because ctx ended (their
	// results say "not attempted"); Cause is why, e.g. the signal.
	NotAttempted int
	Cause        error
	// Sync is the error of syncing the changed filesystems, if any.
	Sync error
}

// errNotLive is returned for live actions without a Live implementation.
var errNotLive = errors.New("not on the live system")

// Apply performs acts in order. Every action is re-validated against the
// file system as it runs (the confined primitives check kind, mount and,
// for rewrites, content), so a plan that went stale fails loudly instead
// of acting on something else. A failed action does not stop the others:
// each is independent and idempotent, and a second run converges. When
// ctx ends, the remaining actions are reported failed and not attempted.
// Apply syncs every filesystem it changed before returning.
func (x *Executor) Apply(ctx context.Context, acts []Action) []Result {
	out := make([]Result, 0, len(acts))
	p := x.Progress
	if p == nil {
		p = silent{}
	}
	p.Begin(acts)
	var end ApplyEnd
	for i, a := range acts {
		r := Result{Action: a}
		if ctx.Err() != nil {
			if end.Cause == nil {
				end.Cause = context.Cause(ctx) // "interrupt signal received"
			}
			end.NotAttempted++
			r.Status, r.Error = Failed, "not attempted: "+end.Cause.Error()
			out = append(out, r)
			continue
		}
		p.Start(i, a)
		changed, detail, err := x.do(ctx, a)
		switch {
		case err != nil:
			r.Status, r.Error = Failed, err.Error()
			if !x.Root.IsHost() {
				r.Error = guestPath(x.Root.Dir(), r.Error)
			}
		case changed:
			r.Status = Done
		default:
			r.Status = Unchanged
		}
		r.Detail = detail
		out = append(out, r)
		p.Finish(i, r)
	}
	end.Sync = x.Root.Sync()
	p.End(end)
	return out
}

// silent is the Progress of an Executor without one.
type silent struct{}

func (silent) Begin([]Action)     {}
func (silent) Start(int, Action)  {}
func (silent) Finish(int, Result) {}
func (silent) End(ApplyEnd)       {}

func (x *Executor) do(ctx context.Context, a Action) (changed bool, detail string, err error) {
	mode := -1
	if a.Mode != 0 {
		mode = int(a.Mode)
	}
	switch a.Kind {
	case Truncate:
		var o fs.Outcome
		o, err = x.Root.TruncateFile(a.Path, mode)
		changed, detail = o.Changed, LinkDetail(a.Kind, o.Links)
	case Remove:
		if a.Kinds == 0 {
			return false, "", fmt.Errorf("remove %s: no file kinds in the action", a.Path)
		}
		var st fs.TreeStats
		st, err = x.Root.Remove(a.Path, a.Kinds)
		changed = st.Removed > 0
		if !st.Complete() {
			detail = fmt.Sprintf("removed %d entries; kept %d (%s), %d on other mounts, %d errors", st.Removed, st.Kept, st.KeptKinds, st.Mounts, st.Errors)
		} else if st.Removed > 1 {
			detail = fmt.Sprintf("removed %d entries", st.Removed)
		}
	case Rewrite:
		if a.Expect == "" {
			return false, "", fmt.Errorf("rewrite %s: no expected content hash in the action", a.Path)
		}
		var o fs.Outcome
		o, err = x.Root.ReplaceFile(a.Path, []byte(a.Content), mode, a.Expect)
		changed, detail = o.Changed, LinkDetail(a.Kind, o.Links)
	case WriteFile:
		var o fs.Outcome
		o, err = x.Root.ReplaceFile(a.Path, []byte(a.Content), mode, a.Expect)
		changed, detail = o.Changed, LinkDetail(a.Kind, o.Links)
	case Symlink:
		changed, err = x.Root.Symlink(a.Path, a.Target, a.Kinds)
	case Mkdir:
		perm := uint32(0o755)
		if a.Mode != 0 {
			perm = uint32(a.Mode)
		}
		changed, err = x.Root.Mkdir(a.Path, perm)
	case StopUnit, RelinquishVar, RunHook:
		if x.Live == nil || !x.Root.IsHost() {
			return false, "", fmt.Errorf("%s: %w", a.Kind, errNotLive)
		}
		switch a.Kind {
		case StopUnit:
			err = x.Live.StopUnit(ctx, a.Target)
		case RelinquishVar:
			err = x.Live.RelinquishJournal(ctx)
		default:
			err = x.runHook(ctx, a.Path)
		}
		changed = err == nil
	default:
		return false, "", fmt.Errorf("%s %s: unknown action kind", a.Kind, a.Path)
	}
	return changed, detail, err
}

// runHook re-checks that the hook is still an executable regular file.
func (x *Executor) runHook(ctx context.Context, p string) error {
	e, err := x.Root.Lstat(p)
	if err != nil {
		return err
	}
	if e.Kind != fs.KindRegular || e.Perm&0o111 == 0 {
		return fmt.Errorf("run %s: %w: not an executable regular file", p, fs.ErrKind)
	}
	if err := x.Live.RunHook(ctx, p); err != nil {
		return fmt.Errorf("run %s: %w", p, err)
	}
	return nil
}

// describe is an action in a few words: "remove /etc/ssh/ssh_host_rsa_key".
func describe(a Action) string {
	switch a.Kind {
	case Symlink:
		return fmt.Sprintf("symlink %s -> %s", a.Path, a.Target)
	case StopUnit:
		return "stop-unit " + a.Target
	case Truncate, WriteFile, Rewrite, Mkdir:
		if a.Mode != 0 {
			return fmt.Sprintf("%s %s (mode %04o)", a.Kind, a.Path, uint32(a.Mode))
		}
	case Remove:
		if a.Entries > 1 {
			return fmt.Sprintf("remove %s (%d entries)", a.Path, a.Entries)
		}
	}
	return string(a.Kind) + " " + a.Path
}
