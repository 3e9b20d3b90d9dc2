// Package seal plans, applies and verifies the sealing of a Linux guest
// root into a template: the per-instance identity (machine-id, SSH host
// keys, cloud-init state, leases, logs ...) is cleared so that every clone
// boots as a new machine.
//
// Operations only read, through the read-only View of a confined root, and
// return Actions as data. One executor (Apply) performs them, re-checking
// each file's kind and mount at the moment it acts. Verify is Plan again:
// a sealed root plans nothing. Run is the whole sequence of one sealprep
// command, from preflight to the report.
package seal

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// ActionKind is what the executor does to a path.
type ActionKind string

// The action kinds.
const (
	Truncate      ActionKind = "truncate"       // empty a regular file in place (Mode set when not zero)
	Remove        ActionKind = "remove"         // remove a file, or a directory tree, of the listed Kinds
	Rewrite       ActionKind = "rewrite"        // replace a regular file's content atomically (Expect = old SHA-256)
	WriteFile     ActionKind = "write-file"     // create or replace a file with Content and Mode atomically
	Symlink       ActionKind = "symlink"        // make Path a symlink to Target, replacing a regular file
	Mkdir         ActionKind = "mkdir"          // create a directory (Mode)
	StopUnit      ActionKind = "stop-unit"      // live: stop systemd unit Target
	RelinquishVar ActionKind = "relinquish-var" // live: make journald leave /var/log/journal
	RunHook       ActionKind = "run-hook"       // live: run executable Path
)

// Mode is a file permission mode; JSON shows it in octal ("0444").
type Mode uint32

// MarshalJSON writes m as an octal string.
func (m Mode) MarshalJSON() ([]byte, error) { return json.Marshal(fmt.Sprintf("%04o", uint32(m))) }

// UnmarshalJSON reads an octal string.
func (m *Mode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return fmt.Errorf("mode %q: %w", s, err)
	}
	*m = Mode(v)
	return nil
}

// Action is one planned change. Paths are the guest's absolute paths.
type Action struct {
	Op      string     `json:"op"`
	Kind    ActionKind `json:"kind"`
	Path    string     `json:"path"`
	Reason  string     `json:"reason"`
	Mode    Mode       `json:"mode,omitempty"`
	Kinds   fs.Kinds   `json:"kinds,omitempty"`
	Content string     `json:"content,omitempty"`
	Target  string     `json:"target,omitempty"`
	Expect  string     `json:"expect_sha256,omitempty"`
	Entries int        `json:"entries,omitempty"` // entries a tree removal covers
	// Links is the file's link count at planning time when above 1, for
	// actions that change a file's content or mode: a hard link, whose
	// other names (perhaps outside the root) share the inode. The executor
	// never changes such an inode in place; it re-reads the count on the
	// descriptor it acts on. Removals do not carry it: unlinking one name
	// leaves the inode and its other names as they are.
	Links uint32 `json:"links,omitempty"`
	// Tidy, when set, says why the action clears no identity (only the
	// mode differs, the content is one systemd ignores, it is sealprep's
	// own template record): apply still performs it, verify reports it as
	// a warning and the root as sealed.
	Tidy string `json:"tidy,omitempty"`
}

// LinkDetail says what a hard-linked file with links names becomes under
// an action of kind k, for plans and results; "" when it has one name.
func LinkDetail(k ActionKind, links uint32) string {
	if links < 2 {
		return ""
	}
	switch k {
	case Truncate, Rewrite, WriteFile:
		return fmt.Sprintf("hard link (%d names): replaced by a new file with the same owner, mode and extended attributes; the other names keep the old content", links)
	case Symlink:
		return fmt.Sprintf("hard link (%d names): this name becomes the symlink; the other names keep the old content", links)
	}
	return ""
}

// Note says what an operation deliberately left alone, and why; or, with
// Forced, a refusal that --force overrode: the operation went ahead, and
// Message says what was refused.
type Note struct {
	Op      string `json:"op"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	Forced  bool   `json:"forced,omitempty"`
}

// The Op of refusals that belong to no operation.
const (
	OpPreflight = "preflight" // the root as a whole (not an OS root, read-only, a container)
	OpConfirm   = "confirm"   // apply's question (no terminal, or not answered yes)
	OpImage     = "image"     // --image: the image file could not be attached
)

// Refusal is a reason not to seal at all. Forcible ones give way to
// --force. Op is the operation's ID, or OpPreflight, OpConfirm or OpImage.
type Refusal struct {
	Op   string `json:"op,omitempty"`
	Path string `json:"path,omitempty"`
	// Message says why; Fix, when there is one, what to do instead. The
	// text report shows them on two lines, so that each fits a terminal.
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
	Forcible bool   `json:"forcible"`
}

// OpError is an operation whose planning failed (it could not read).
type OpError struct {
	Op    string `json:"op"`
	Error string `json:"error"`
}

// Plan is the whole plan of one run.
type Plan struct {
	Actions  []Action
	Notes    []Note
	Refusals []Refusal
	Errors   []OpError
}

// MachineIDMode is what /etc/machine-id becomes.
type MachineIDMode string

// The machine-id modes.
const (
	// MachineIDEmpty leaves an empty file: every systemd generates a new ID
	// at boot, without first-boot presets (machine-id(5)).
	MachineIDEmpty MachineIDMode = "empty"
	// MachineIDUninitialized writes "uninitialized\n": a new ID and
	// first-boot semantics (ConditionFirstBoot=, presets) on systemd >= 247.
	MachineIDUninitialized MachineIDMode = "uninitialized"
)

// Options shape a plan.
type Options struct {
	// Live is true when the root is the running system's "/": live-only
	// steps (stopping units, hooks) are planned, and live files (utmp) kept.
	Live bool
	// Booted is true when systemd runs as PID 1 on the live system.
	Booted bool
	// MachineIDMode defaults to MachineIDEmpty.
	MachineIDMode MachineIDMode
	// Force turns forcible refusals into notes.
	Force bool
	// PowerOff is true when a forced power-off follows the apply at once:
	// nothing runs afterwards, so what running services still own (their
	// sockets and private directories in /tmp) goes too, and the powered-off
	// image then verifies as sealed offline.
	PowerOff bool
	// Now is the seal time the template record carries (zero: the clock),
	// and Version the sealprep version it names.
	Now     time.Time
	Version string

	// kept are the default operations --ops dropped, and forced the
	// refusals --force passed before planning (preflight's), for the
	// template record; recorded are the refusals the template record
	// says apply's --force passed, which verify passes alike (Run sets
	// all three).
	kept     []string
	forced   []sealrecord.Forced
	recorded []sealrecord.Forced
	// verify is set for verify's plan (Run sets it): a forcible refusal
	// is reported and planned past, so that the identity it would keep
	// counts as left, and the template record is judged against the root
	// as it is, not against what an apply with these options would do.
	verify bool
}

// View is the read-only face of the confined root that operations get, so
// that planning cannot change anything.
type View interface {
	fs.Reader
	ScanTree(p string, kinds fs.Kinds) (fs.TreeStats, error)
}

var _ View = (*fs.Confined)(nil)

// Operation is one named group of actions, e.g. "machine-id", and its
// descriptor: everything sealprep says about it is written here, once, in
// the operation's own file. `sealprep list`, the template record's
// wording, the completions, sealprep(8) and the operation tables of
// docs/reference.md and docs/sealprep.md all come from it; the identity
// items it owns are the catalogue's (Items).
type Operation struct {
	// ID is the operation's name in --ops, reports and the record.
	ID string
	// Default operations run under --ops defaults; the others are opt-in.
	Default bool
	// Summary says in one line what the operation clears, as `sealprep
	// list` and docs/reference.md show it.
	Summary string
	// Kept is how the template record tells this default operation when
	// --ops drops it: what every clone then shares. Opt-in operations,
	// and template-record (without which there is no record), have none.
	Kept sealrecord.Wording
	// Doc is the operation's row in docs/sealprep.md.
	Doc Doc
	// Plan returns the actions that would clear this operation's identity;
	// none when it is already clear. It only reads, through p.
	Plan func(ctx context.Context, p *Planner) ([]Action, error)
}

// Doc is an operation's row in docs/sealprep.md's table of default or
// opt-in operations: Markdown, each field one table cell (a bar in it is
// escaped).
type Doc struct {
	// Tag follows the ID in the first column, in parentheses ("runs
	// last"); "" for none.
	Tag string
	// What says what the operation does, in detail: the paths, the
	// distributions, the live case.
	What string
	// Why says why clones need it (a default operation), or why it is
	// opt-in.
	Why string
}

// Items lists the identity items of the catalogue this operation owns:
// those whose Op names it. The catalogue says which operation handles
// each item, so the two cannot disagree.
func (op Operation) Items() []catalogue.Item { return catalogue.ForOp(op.ID) }

// keptOne is the Kept of an operation that clears one thing ("every
// clone will share it"), keptMany of one that clears many ("them").
func keptOne(what string) sealrecord.Wording  { return sealrecord.Wording{What: what, One: true} }
func keptMany(what string) sealrecord.Wording { return sealrecord.Wording{What: what} }

// Planner is what an operation plans with: the read-only root, the
// options, and the place to record notes and refusals.
type Planner struct {
	Root View
	Opts Options

	op        string
	notes     []Note
	refusals  []Refusal
	rewritten map[string][]byte // content planned by earlier rewrites
	leftovers []Action          // interrupted runs' temporaries that walks met
	selected  map[string]bool   // IDs of the operations in this plan
	opIDs     []string          // the same, in plan order, for the template record
	// forced are the refusals --force passed, for the template record:
	// preflight's and every other operation's (it is planned last).
	forced []sealrecord.Forced
}

// NewPlanner returns a planner over root.
func NewPlanner(root View, o Options) *Planner {
	if o.MachineIDMode == "" {
		o.MachineIDMode = MachineIDEmpty
	}
	return &Planner{Root: root, Opts: o}
}

// Note records that the current operation left path alone, and why.
func (p *Planner) Note(path, format string, args ...any) {
	p.notes = append(p.notes, Note{Op: p.op, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Refuse records a refusal. A forcible one becomes a note under --force and
// Refuse then returns true: the caller goes ahead. Verify goes ahead past
// a forcible one too, still reporting it: the identity the refusal keeps
// is left, and verify counts it.
func (p *Planner) Refuse(path string, forcible bool, format string, args ...any) bool {
	msg := fmt.Sprintf(format, args...)
	if forcible && (p.Opts.Force || p.Opts.wasForced(p.op, path)) {
		p.notes = append(p.notes, Note{Op: p.op, Path: path, Message: forcedReason(msg), Forced: true})
		return true
	}
	p.refusals = append(p.refusals, Refusal{Op: p.op, Path: path, Message: msg, Forcible: forcible})
	return forcible && p.Opts.verify
}

// RefuseFix records a refusal that says why and, apart, what to do
// instead. A forcible one becomes a note (why alone: the way past it was
// just taken) under --force, and RefuseFix then returns true: the caller
// goes ahead. Verify goes ahead past a forcible one too, as with Refuse.
func (p *Planner) RefuseFix(path string, forcible bool, why, fix string) bool {
	if forcible && (p.Opts.Force || p.Opts.wasForced(p.op, path)) {
		p.notes = append(p.notes, Note{Op: p.op, Path: path, Message: why, Forced: true})
		return true
	}
	p.refusals = append(p.refusals, Refusal{Op: p.op, Path: path, Message: why, Fix: fix, Forcible: forcible})
	return forcible && p.Opts.verify
}

// forcedReason is what a forcible refusal's message says once --force has
// overridden it: the reason, without the closing advice on how to get
// past it ("Drop the operation ..., or --force"), which was just taken.
func forcedReason(msg string) string {
	if i := strings.LastIndex(msg, ". "); i >= 0 && strings.Contains(msg[i:], "--force") {
		return msg[:i]
	}
	return msg
}

// MakePlan runs the Plan of each operation in order and collects the
// actions. An action under a tree that an earlier action removes, or on a
// path an earlier action removes, is dropped: it would find nothing. The
// template record is planned last, when every refusal --force passed is
// known, and its actions, notes and refusals keep its place in the order.
func MakePlan(ctx context.Context, root View, ops []Operation, o Options) Plan {
	p := NewPlanner(root, o)
	p.selected = map[string]bool{}
	for _, op := range ops {
		p.selected[op.ID] = true
		p.opIDs = append(p.opIDs, op.ID)
	}
	outs := make([]opPlan, len(ops))
	record := -1
	for i, op := range ops {
		if op.ID == opTemplateRecord.ID {
			record = i
			continue
		}
		outs[i] = p.planOp(ctx, op)
	}
	if record >= 0 {
		p.forced = append([]sealrecord.Forced(nil), o.forced...)
		for _, out := range outs {
			for _, n := range out.notes {
				if n.Forced {
					p.forced = append(p.forced, sealrecord.NewForced(n.Op, n.Path, n.Message))
				}
			}
		}
		outs[record] = p.planOp(ctx, ops[record])
	}
	var plan Plan
	removed := map[string]bool{}
	for i, op := range ops {
		out := outs[i]
		plan.Notes = append(plan.Notes, out.notes...)
		plan.Refusals = append(plan.Refusals, out.refusals...)
		if out.err != nil {
			plan.Errors = append(plan.Errors, OpError{Op: op.ID, Error: out.err.Error()})
			continue
		}
		for _, a := range out.actions {
			a.Op = op.ID
			if coveredBy(removed, a.Path) {
				continue
			}
			if a.Kind == Remove {
				removed[a.Path] = true
			}
			plan.Actions = append(plan.Actions, a)
		}
	}
	return plan
}

// opPlan is what planning one operation gave.
type opPlan struct {
	actions  []Action
	notes    []Note
	refusals []Refusal
	err      error
}

// planOp plans op alone: its actions (with the leftovers its walks met),
// notes and refusals, or why it could not be planned.
func (p *Planner) planOp(ctx context.Context, op Operation) opPlan {
	if err := ctx.Err(); err != nil {
		return opPlan{err: err}
	}
	p.op, p.leftovers, p.notes, p.refusals = op.ID, nil, nil, nil
	acts, err := op.Plan(ctx, p)
	out := opPlan{actions: append(acts, p.leftovers...), notes: p.notes, refusals: p.refusals, err: err}
	p.notes, p.refusals = nil, nil
	return out
}

func coveredBy(removed map[string]bool, p string) bool {
	if len(removed) == 0 || p == "" {
		return false
	}
	for q := p; ; q = path.Dir(q) {
		if removed[q] {
			return true
		}
		if q == "/" || q == "." {
			return false
		}
	}
}
