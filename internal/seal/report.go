package seal

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// SchemaVersion is the version of sealprep's JSON output. Changes within a
// version are additive.
const SchemaVersion = 1

// Exit codes, shared by every output format.
const (
	ExitOK      = 0 // planned; applied and sealed; verified sealed
	ExitProblem = 1 // an action or an operation failed, or identity is left
	ExitUsage   = 3 // usage error or refusal
)

// Status is a run's overall outcome.
type Status string

// The outcomes.
const (
	StatusPlanned   Status = "planned"    // plan: nothing was changed
	StatusSealed    Status = "sealed"     // apply or verify: no identity left
	StatusNotSealed Status = "not-sealed" // verify: identity left
	StatusFailed    Status = "failed"     // apply: an action or operation failed, or identity left
	StatusRefused   Status = "refused"    // nothing was changed
	// StatusAppliedLive is a live apply whose actions all succeeded but
	// whose re-plan found identity that the running system recreated
	// (a log written since); --poweroff right after keeps it out.
	StatusAppliedLive Status = "applied"
)

// Report is the result of one plan, apply or verify.
type Report struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          string    `json:"tool"`
	Version       string    `json:"version"`
	Command       string    `json:"command"`
	Root          string    `json:"root"`
	Live          bool      `json:"live"`
	MachineIDMode string    `json:"machine_id_mode"`
	Operations    []string  `json:"operations"`
	StartedAt     time.Time `json:"started_at"`
	DurationMS    int64     `json:"duration_ms"`
	Status        Status    `json:"status"`
	Summary       Summary   `json:"summary"`
	// Actions: plan and verify list what is (still) to do, apply what it did.
	Actions []Result `json:"actions"`
	// Left is apply's re-plan afterwards: identity still present.
	Left     []Action  `json:"left,omitempty"`
	Notes    []Note    `json:"notes"`
	Refusals []Refusal `json:"refusals"`
	Errors   []OpError `json:"errors"`
	// Image says how an --image run attached and mounted the image.
	Image *ImageInfo `json:"image,omitempty"`
	// Trim is what apply --fstrim discarded, per filesystem.
	Trim []TrimResult `json:"trim,omitempty"`
	// SELinux is set offline on an image with SELinux enabled.
	SELinux *SELinuxInfo `json:"selinux,omitempty"`
	// Selection is set on verify: where its operations and machine-id
	// mode came from.
	Selection *Selection `json:"selection,omitempty"`
	// Kept is set on verify: what the template record says the seal keeps
	// by choice (operations --ops dropped, refusals --force passed), each
	// a warning that leaves the root sealed.
	Kept []sealrecord.Item `json:"kept,omitempty"`
}

// The sources of verify's operations and machine-id mode.
const (
	FromRecord  = "record"  // apply's template record in the root
	FromOptions = "options" // --ops or --machine-id-mode
	FromDefault = "default" // no record to read them from
)

// Selection says where verify took what it verifies from: each of
// Operations and MachineIDMode is FromRecord, FromOptions or FromDefault.
type Selection struct {
	Operations    string `json:"operations"`
	MachineIDMode string `json:"machine_id_mode"`
	// Note is the same for a person, one line.
	Note string `json:"note"`
}

// Summary counts actions by outcome.
type Summary struct {
	Actions   int `json:"actions"`
	Done      int `json:"done"`
	Unchanged int `json:"unchanged"`
	Failed    int `json:"failed"`
	Left      int `json:"left"`
	// Warnings counts verify's tidy actions (changes apply would still
	// make that clear no identity: a mode, content systemd ignores) and
	// what the template keeps by choice.
	Warnings int `json:"warnings,omitempty"`
}

// Meta is what a report says about the run besides the results.
type Meta struct {
	Tool, Version, Command, Root string
	Live                         bool
	MachineIDMode                MachineIDMode
	Operations                   []Operation
	StartedAt                    time.Time
	Duration                     time.Duration
	// Image is set on --image runs.
	Image *ImageInfo
	// Selection is set on verify.
	Selection *Selection
}

func newReport(m Meta) Report {
	r := Report{
		SchemaVersion: SchemaVersion, Tool: m.Tool, Version: m.Version, Command: m.Command,
		Root: m.Root, Live: m.Live, MachineIDMode: string(m.MachineIDMode),
		StartedAt: m.StartedAt.UTC(), DurationMS: m.Duration.Milliseconds(), Image: m.Image, Selection: m.Selection,
		Operations: []string{}, Actions: []Result{}, Notes: []Note{}, Refusals: []Refusal{}, Errors: []OpError{},
	}
	for _, op := range m.Operations {
		r.Operations = append(r.Operations, op.ID)
	}
	return r
}

func (r *Report) addPlan(p Plan) {
	r.Notes = append(r.Notes, p.Notes...)
	r.Refusals = append(r.Refusals, p.Refusals...)
	r.Errors = append(r.Errors, p.Errors...)
}

// PlanReport reports a plan (command plan) or, with verify, the identity
// still present (command verify).
func PlanReport(m Meta, p Plan, refusals []Refusal, notes []Note) Report {
	r := newReport(m)
	r.Refusals = append(r.Refusals, refusals...)
	r.Notes = append(r.Notes, notes...)
	r.addPlan(p)
	left := 0
	for _, a := range p.Actions {
		res := Result{Action: a, Status: Planned, Detail: planDetail(a)}
		if a.Tidy == "" {
			left++
		} else if m.Command == "verify" {
			res.Status = Warn
			r.Summary.Warnings++
		}
		r.Actions = append(r.Actions, res)
	}
	r.Summary.Actions = len(p.Actions)
	switch {
	case len(r.Refusals) > 0 && m.Command != "verify":
		r.Status = StatusRefused
	case m.Command == "verify" && (left > 0 || len(r.Errors) > 0 || len(r.Refusals) > 0):
		r.Summary.Left = left
		r.Status = StatusNotSealed
	case m.Command == "verify":
		r.Status = StatusSealed
	case len(r.Errors) > 0:
		r.Status = StatusFailed
	default:
		r.Status = StatusPlanned
	}
	return r
}

// planDetail is what a plan or verify says about an action besides its
// reason: that a hard-linked file gets a new inode, and why a tidy action
// clears no identity.
func planDetail(a Action) string {
	var parts []string
	if d := LinkDetail(a.Kind, a.Links); d != "" {
		parts = append(parts, d)
	}
	if a.Tidy != "" {
		parts = append(parts, "no identity: "+a.Tidy)
	}
	return strings.Join(parts, "; ")
}

// RefusedReport reports an apply that changed nothing because of refusals
// (or a declined confirmation).
func RefusedReport(m Meta, p Plan, refusals []Refusal, notes []Note) Report {
	r := PlanReport(m, p, refusals, notes)
	r.Status = StatusRefused
	return r
}

// ApplyReport reports what apply did, with after as the re-plan.
func ApplyReport(m Meta, before Plan, results []Result, after Plan, notes []Note) Report {
	r := newReport(m)
	r.Notes = append(r.Notes, notes...)
	r.addPlan(before)
	seen := map[OpError]bool{}
	for _, e := range r.Errors {
		seen[e] = true
	}
	for _, e := range after.Errors {
		if !seen[e] {
			r.Errors = append(r.Errors, e)
		}
	}
	r.Actions = append(r.Actions, results...)
	r.Summary.Actions = len(results)
	for _, res := range results {
		switch res.Status {
		case Done:
			r.Summary.Done++
		case Unchanged:
			r.Summary.Unchanged++
		default:
			r.Summary.Failed++
		}
	}
	r.Left = after.Actions
	r.Summary.Left = len(after.Actions)
	switch {
	case r.Summary.Failed > 0 || len(r.Errors) > 0:
		r.Status = StatusFailed
	case r.Summary.Left > 0 && m.Live:
		r.Status = StatusAppliedLive
	case r.Summary.Left > 0:
		r.Status = StatusFailed
	default:
		r.Status = StatusSealed
	}
	return r
}

// ExitCode is the process exit status for r, computed once from its
// status; renderers never decide it.
func ExitCode(r Report) int {
	switch r.Status {
	case StatusPlanned, StatusSealed, StatusAppliedLive:
		return ExitOK
	case StatusRefused:
		return ExitUsage
	}
	return ExitProblem
}

// WriteJSON writes r as indented JSON and a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// maxGroup is how many paths of one group the text report shows.
const maxGroup = 8

// WriteText renders r for a person, readable at 80 columns: actions
// grouped by operation, consecutive actions of one kind and reason
// sharing one "why" line, long groups shortened (the JSON lists all).
// Refusals, errors and notes are one line each, so that a log line holds
// the whole message.
func WriteText(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	if r.Image != nil {
		writeImageHeader(bw, r.Command, r.Image)
	} else {
		mode := "offline image"
		if r.Live {
			mode = "live system"
		}
		fmt.Fprintf(bw, "sealprep %s: %s (%s)\n", r.Command, r.Root, mode)
	}
	if r.Selection != nil && r.Selection.Note != "" {
		fmt.Fprintln(bw, r.Selection.Note)
	}
	switch {
	case r.Command == "apply" && r.Status == StatusRefused:
		// An image refused before it was attached has no plan to show.
		if len(r.Actions) > 0 {
			fmt.Fprintf(bw, "\nWould have applied (%s; nothing was changed):\n", count(len(r.Actions), "action"))
			writeGroups(bw, r.Actions, false)
		}
	case r.Command == "apply" && r.Status != StatusPlanned:
		writeGroups(bw, r.Actions, true)
		if len(r.Left) > 0 {
			fmt.Fprintf(bw, "\nStill present after apply (%d):\n", len(r.Left))
			left := make([]Result, len(r.Left))
			for i, a := range r.Left {
				left[i] = Result{Action: a, Status: Planned}
			}
			writeGroups(bw, left, false)
		}
	case r.Status == StatusRefused && len(r.Actions) == 0:
		// Refused before anything was planned (an image not attached):
		// "Nothing to do" would say the opposite.
	default:
		writeGroups(bw, r.Actions, false)
	}
	writeProblems(bw, r)
	if len(r.Trim) > 0 {
		writeTrimText(bw, r.Trim)
	}
	if r.SELinux != nil {
		writeSELinuxText(bw, r.SELinux)
	}
	writeNotes(bw, r)
	if len(r.Kept) > 0 {
		fmt.Fprintf(bw, "\nKept by choice (%d):\n", len(r.Kept))
		for _, k := range r.Kept {
			fmt.Fprintf(bw, "  warn: %s\n", problem.OneLine(k.Message))
		}
	}
	fmt.Fprintln(bw)
	fmt.Fprintln(bw, summaryLine(r))
	return bw.Flush()
}

// writeProblems lists the refusals, every one of them with the ID of the
// operation (or preflight, confirm, image) it belongs to, then the errors.
func writeProblems(w io.Writer, r Report) {
	if len(r.Refusals) > 0 {
		fmt.Fprintf(w, "\nRefused (%d):\n", len(r.Refusals))
		for _, f := range r.Refusals {
			fix := f.Fix
			if f.Forcible && !strings.Contains(f.Message+fix, "--force") {
				fix = joinFix(fix, "--force goes ahead anyway")
			}
			fmt.Fprintf(w, "  %s%s\n", prefixOp(f.Op), withPath(f.Path, f.Message))
			if fix != "" {
				fmt.Fprintf(w, "      fix: %s\n", fix)
			}
		}
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "\nErrors (%d):\n", len(r.Errors))
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  %s%s\n", prefixOp(e.Op), problem.OneLine(e.Error))
		}
	}
}

// joinFix adds more to a refusal's fix: "FIX, or MORE", or MORE alone.
func joinFix(fix, more string) string {
	if fix == "" {
		return more
	}
	return fix + ", or " + more
}

// writeNotes lists what was left alone and, apart, the refusals --force
// overrode: those operations did go ahead.
func writeNotes(w io.Writer, r Report) {
	var alone, forced []Note
	for _, n := range r.Notes {
		if n.Forced {
			forced = append(forced, n)
		} else {
			alone = append(alone, n)
		}
	}
	if len(forced) > 0 {
		head := "Refused, but --force went ahead (the actions above were done):"
		switch {
		case r.Command != "apply":
			head = "Refused, but --force goes ahead (apply would do the actions above):"
		case r.Status == StatusRefused:
			head = "Refused, but --force goes ahead:"
		}
		fmt.Fprintf(w, "\n%s\n", head)
		for _, n := range forced {
			fmt.Fprintf(w, "  %s%s\n", prefixOp(n.Op), withPath(n.Path, n.Message))
		}
	}
	if len(alone) > 0 {
		fmt.Fprintln(w, "\nLeft alone:")
		for _, n := range alone {
			fmt.Fprintf(w, "  %s%s\n", prefixOp(n.Op), withPath(n.Path, n.Message))
		}
	}
}

// withPath is "path: msg", or msg alone when there is no path, on one line.
func withPath(path, msg string) string {
	msg = problem.OneLine(msg)
	if path == "" {
		return msg
	}
	return path + ": " + msg
}

// count is "1 action" or "n actions".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// summaryLine is the report's last line: the status and what it counts.
func summaryLine(r Report) string {
	s := r.Summary
	st := strings.ToUpper(string(r.Status))
	switch {
	case r.Status == StatusRefused:
		return fmt.Sprintf("sealprep: %s: nothing was changed; %s planned, %s (%d ms)",
			st, count(s.Actions, "action"), count(len(r.Refusals), "refusal"), r.DurationMS)
	case r.Command == "apply" && r.Status != StatusPlanned: // planned: the plan apply asks about
		return fmt.Sprintf("sealprep: %s: %s, %d done, %d unchanged, %d failed; %d left (%d ms)",
			st, count(s.Actions, "action"), s.Done, s.Unchanged, s.Failed, s.Left, r.DurationMS)
	case r.Command == "verify":
		more := ""
		if n := len(r.Refusals); n > 0 {
			more += ", " + count(n, "refusal")
		}
		if s.Warnings > 0 {
			more += ", " + count(s.Warnings, "warning")
		}
		return fmt.Sprintf("sealprep: %s: %s left%s (%d ms)", st, count(s.Left, "identity item"), more, r.DurationMS)
	}
	return fmt.Sprintf("sealprep: %s: %s in %s; nothing changed (%d ms)",
		st, count(s.Actions, "action"), count(len(r.Operations), "operation"), r.DurationMS)
}

func prefixOp(op string) string {
	if op == "" {
		return ""
	}
	return "[" + op + "] "
}

// writeGroups lists rs by operation and, within one, by kind and reason
// (in the order each first appears), so that a walk alternating two kinds
// (truncate a log, remove a rotated one) still makes two groups of a few
// lines, not a line and a "why" per action.
func writeGroups(w io.Writer, rs []Result, outcome bool) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "\nNothing to do.")
		return
	}
	type key struct {
		op     string
		kind   ActionKind
		reason string
	}
	var ops []string
	groups := map[string][]key{}
	members := map[key][]int{}
	for i, r := range rs {
		k := key{r.Op, r.Kind, r.Reason}
		if _, ok := members[k]; !ok {
			if _, ok := groups[r.Op]; !ok {
				ops = append(ops, r.Op)
			}
			groups[r.Op] = append(groups[r.Op], k)
		}
		members[k] = append(members[k], i)
	}
	for _, op := range ops {
		fmt.Fprintf(w, "\n%s\n", op)
		for _, k := range groups[op] {
			idx := members[k]
			shown := 0
			lastDetail := ""
			for _, i := range idx {
				r := rs[i]
				if shown >= maxGroup && r.Status != Failed {
					continue
				}
				line := "  " + describe(r.Action)
				if r.Status == Warn {
					line = "  warn: " + describe(r.Action)
				}
				if outcome {
					line = fmt.Sprintf("  %-9s %s", r.Status, describe(r.Action))
				}
				fmt.Fprintln(w, line)
				// A detail the group's previous action had (a tidy one's
				// "no identity") is said once.
				if r.Detail != "" && r.Detail != lastDetail {
					wrap(w, "            ", "            ", r.Detail)
				}
				lastDetail = r.Detail
				if r.Error != "" {
					fmt.Fprintf(w, "            error: %s\n", problem.OneLine(r.Error))
				}
				shown++
			}
			if hidden := len(idx) - shown; hidden > 0 {
				fmt.Fprintf(w, "  ... and %d more like these (--format json lists all)\n", hidden)
			}
			wrap(w, "    why: ", "         ", k.reason)
		}
	}
}

// wrap writes first+text wrapped at 80 columns, continuing with indent.
func wrap(w io.Writer, first, indent, text string) {
	const width = 80
	line := first
	fresh := true
	for _, wd := range strings.Fields(text) {
		if !fresh && len(line)+1+len(wd) > width {
			fmt.Fprintln(w, line)
			line, fresh = indent, true
		}
		if !fresh {
			line += " "
		}
		line += wd
		fresh = false
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// OpInfo is one operation in `sealprep list --format json`.
type OpInfo struct {
	ID       string `json:"id"`
	Default  bool   `json:"default"`
	Selected bool   `json:"selected"`
	Summary  string `json:"summary"`
	// Items are the identity items of the catalogue it owns, by name.
	Items []string `json:"items,omitempty"`
}

// ListReport is the JSON of `sealprep list`.
type ListReport struct {
	SchemaVersion int      `json:"schema_version"`
	Operations    []OpInfo `json:"operations"`
}

// ListOrder is all as `sealprep list` shows it: the default operations,
// then the opt-in ones, each in the order apply runs them (machine-id, a
// default that runs last, is not listed among the opt-in ones).
func ListOrder(all []Operation) []Operation {
	var defaults, optIn []Operation
	for _, op := range all {
		if op.Default {
			defaults = append(defaults, op)
		} else {
			optIn = append(optIn, op)
		}
	}
	return append(defaults, optIn...)
}

// NewListReport lists all in ListOrder, marking the selected operations.
func NewListReport(all, selected []Operation) ListReport {
	on := map[string]bool{}
	for _, op := range selected {
		on[op.ID] = true
	}
	l := ListReport{SchemaVersion: SchemaVersion}
	for _, op := range ListOrder(all) {
		info := OpInfo{ID: op.ID, Default: op.Default, Selected: on[op.ID], Summary: op.Summary}
		for _, it := range op.Items() {
			info.Items = append(info.Items, it.Name)
		}
		l.Operations = append(l.Operations, info)
	}
	return l
}

// WriteList renders the operation list: ID, default or opt-in, whether
// the current --ops selects it, and the summary on its own line.
func WriteList(w io.Writer, l ListReport) error {
	bw := bufio.NewWriter(w)
	idw := 0
	for _, o := range l.Operations {
		idw = max(idw, len(o.ID))
	}
	for _, o := range l.Operations {
		def := "opt-in"
		if o.Default {
			def = "default"
		}
		sel := " "
		if o.Selected {
			sel = "*"
		}
		// The kind is last on its line: no padding after it.
		fmt.Fprintf(bw, "%s %-*s  %s\n", sel, idw, o.ID, def)
		wrap(bw, "    ", "    ", o.Summary)
	}
	fmt.Fprintln(bw, "\n* = selected by --ops (default: the default operations)")
	return bw.Flush()
}
