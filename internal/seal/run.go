package seal

import (
	"context"
	"errors"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// The commands Run performs.
const (
	CommandPlan   = "plan"
	CommandApply  = "apply"
	CommandVerify = "verify"
)

// ErrPowerOffNotBooted is Run's answer to a power-off asked for anywhere
// but the running system booted with systemd: there is nothing to power
// off, and the request is a usage error.
var ErrPowerOffNotBooted = errors.New("--poweroff needs the running system booted with systemd (--root /); refusing")

// Request is one plan, apply or verify of a root: what to do, and the
// outside world it is done through. The caller (cmd/sealprep) fills it
// from its flags; Run decides everything else.
type Request struct {
	// Command is CommandPlan, CommandApply or CommandVerify.
	Command string
	// Ops are the selected operations. On verify, the template record's
	// replace them unless OpsGiven (--ops was on the command line); All is
	// what its IDs are resolved against (nil: All).
	Ops      []Operation
	OpsGiven bool
	All      []Operation
	// ModeGiven says that Opts.MachineIDMode came from the command line:
	// verify then does not take the template record's.
	ModeGiven bool
	// Refusals are the caller's own reasons not to apply (apply without
	// --yes and without a terminal to ask on), listed with the rest.
	Refusals []Refusal
	// Opts shape the plan. Run sets Live (the root is the running
	// system's "/") and Booted itself, and Now to the start when zero.
	Opts Options
	// HostBooted says whether the running system was booted with systemd;
	// asked only for a live root. nil: not booted.
	HostBooted func() bool
	// HostRead reads the machine sealprep runs on, for preflight's
	// container hints.
	HostRead func(string) ([]byte, error)
	// Image says how an --image run attached its root; nil otherwise.
	Image *ImageInfo

	// Confirm is asked once before apply changes anything, with the plan
	// as a report, when there is something to do and nothing refused. An
	// error refuses the apply, its message the refusal. nil: no question
	// (--yes).
	Confirm func(plan Report) error
	// Interrupt wraps the context the executor runs under, so that a
	// signal stops apply after the current action; nil leaves ctx as is.
	Interrupt func(ctx context.Context) (context.Context, context.CancelFunc)
	// Live performs live-only actions; used only on a live root.
	Live Live
	// Progress hears about every action apply runs; nil is silent.
	Progress Progress
	// RelabelFiles counts what a full SELinux relabel of the filesystem
	// at dir walks (0: unknown), for the report; nil: not counted.
	RelabelFiles func(dir string) uint64
	// Trim discards free blocks after an apply that was not refused;
	// nil: no trim (no --fstrim).
	Trim func() []TrimResult
}

// Run performs r on root: preflight, plan, what the plan means for SELinux
// labels, then for plan and verify the report of the plan, and for apply
// the confirmation, the executor, the re-plan that verifies it, the labels
// of the files it created and the trim. The error is a usage error that
// stopped Run before it made a report.
func Run(ctx context.Context, root *fs.Confined, r Request) (Report, error) {
	start := time.Now()
	opts := r.Opts
	opts.Live = root.IsHost()
	opts.Booted = opts.Live && r.HostBooted != nil && r.HostBooted()
	opts.verify = r.Command == CommandVerify
	if opts.PowerOff && !opts.Booted {
		return Report{}, ErrPowerOffNotBooted
	}
	if opts.Now.IsZero() {
		opts.Now = start
	}
	ops := r.Ops
	var sel *Selection
	var rec *sealrecord.Record
	if r.Command == CommandVerify {
		ops, opts.MachineIDMode, sel = verifySelection(root, r)
		if rec = identity.ReadTemplate(root).Record; rec != nil {
			opts.recorded = rec.Forced
		}
	}
	meta := Meta{Tool: "sealprep", Version: opts.Version, Command: r.Command, Root: root.Dir(),
		Live: opts.Live, MachineIDMode: opts.MachineIDMode, Operations: ops, StartedAt: start, Image: r.Image, Selection: sel}

	refusals, notes := Preflight(root, opts, r.Command == CommandApply, r.HostRead)
	if r.Command == CommandApply {
		refusals = append(refusals, r.Refusals...)
	}
	all := r.All
	if all == nil {
		all = All
	}
	opts.keptChoices(all, ops, notes)
	plan := MakePlan(ctx, root, ops, opts)
	se := PlanSELinux(root, plan, opts.Live)
	if se != nil && se.Relabel && r.RelabelFiles != nil {
		se.RelabelFiles = r.RelabelFiles(root.Dir())
	}
	var rep Report
	if r.Command == CommandApply {
		rep = r.apply(ctx, root, meta, opts, plan, refusals, notes)
		if rep.Status != StatusRefused {
			se.LabelCreated(root, rep.Actions)
			if r.Trim != nil {
				rep.Trim = r.Trim()
			}
		}
	} else {
		meta.Duration = time.Since(start)
		rep = PlanReport(meta, plan, refusals, notes)
		if r.Command == CommandVerify {
			rep.Kept, rep.Notes = keptItems(rec, ops, opts, rep.Notes)
			rep.Summary.Warnings += len(rep.Kept)
		}
	}
	rep.SELinux = se
	if !opts.Live {
		rep.guestPaths(root.Dir())
	}
	return rep, nil
}

// apply asks for confirmation, runs the plan through the executor and
// verifies by planning again; a refusal (preflight's, the plan's or a
// declined confirmation) changes nothing.
func (r Request) apply(ctx context.Context, root *fs.Confined, meta Meta, opts Options, plan Plan,
	refusals []Refusal, notes []Note) Report {
	refused := func(msg string) Report {
		meta.Duration = time.Since(meta.StartedAt)
		if msg != "" {
			refusals = append(refusals, Refusal{Op: OpConfirm, Message: msg})
		}
		return RefusedReport(meta, plan, refusals, notes)
	}
	if len(refusals) > 0 || len(plan.Refusals) > 0 {
		return refused("")
	}
	if r.Confirm != nil && len(plan.Actions) > 0 {
		if err := r.Confirm(PlanReport(meta, plan, nil, notes)); err != nil {
			return refused(err.Error())
		}
	}
	// From here, an interrupt stops after the current action: every action
	// is idempotent, so running apply again finishes the job.
	xctx := ctx
	if r.Interrupt != nil {
		var stop context.CancelFunc
		xctx, stop = r.Interrupt(ctx)
		defer stop()
	}
	x := &Executor{Root: root, Progress: r.Progress}
	if opts.Live {
		x.Live = r.Live
	}
	results := x.Apply(xctx, plan.Actions)
	after := MakePlan(ctx, root, meta.Operations, opts)
	meta.Duration = time.Since(meta.StartedAt)
	return ApplyReport(meta, plan, results, after, notes)
}
