package seal

import (
	"fmt"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
)

// verifySelection is what verify checks on root: the operations and
// machine-id mode apply recorded in the template record, each unless the
// command line named it, or r's (the defaults) when there is no usable
// record. The Selection says which, for the report.
func verifySelection(root fs.Reader, r Request) ([]Operation, MachineIDMode, *Selection) {
	all := r.All
	if all == nil {
		all = All
	}
	ops, mode := r.Ops, r.Opts.MachineIDMode
	if mode == "" {
		mode = MachineIDEmpty
	}
	sel := &Selection{Operations: FromOptions, MachineIDMode: FromOptions}
	if r.OpsGiven && r.ModeGiven {
		return ops, mode, sel
	}
	t := identity.ReadTemplate(root)
	var why string // why the record gave nothing, for the note
	var unknown []string
	switch {
	case t.Record == nil && !t.Found:
		why = "no template record at " + sealrecord.Path
	case t.Record == nil:
		why = "the template record is not usable (" + t.Err().Error() + ")"
	}
	rec := t.Record
	if !r.OpsGiven {
		sel.Operations = FromDefault
		if rec != nil && len(rec.Operations) > 0 {
			ops, unknown = byID(all, rec.Operations)
			sel.Operations = FromRecord
		}
	}
	if !r.ModeGiven {
		sel.MachineIDMode = FromDefault
		if rec != nil && rec.MachineIDMode != "" {
			mode, sel.MachineIDMode = MachineIDMode(rec.MachineIDMode), FromRecord
		}
	}
	if why == "" && (sel.Operations == FromDefault || sel.MachineIDMode == FromDefault) {
		why = "the template record does not say (an older sealprep wrote it)"
	}
	sel.Note = selectionNote(sel, Spec(all, ops), mode, why, rec)
	if len(unknown) > 0 {
		sel.Note += "; the record also names " + strings.Join(unknown, ", ") + ", which this sealprep does not have"
	}
	return ops, mode, sel
}

// selectionNote is the report's line on what verify checks and where
// that came from.
func selectionNote(sel *Selection, spec string, mode MachineIDMode, why string, rec *sealrecord.Record) string {
	what := fmt.Sprintf("--ops %s and --machine-id-mode %s", spec, mode)
	recorded := "as apply recorded them in " + sealrecord.Path
	if rec != nil {
		recorded += " (sealed " + rec.SealedAt.UTC().Format(time.RFC3339) + ")"
	}
	switch {
	case sel.Operations == FromRecord && sel.MachineIDMode == FromRecord:
		return "verifying " + what + ", " + recorded
	case sel.Operations == FromDefault && sel.MachineIDMode == FromDefault:
		return "verifying " + what + ", assumed: " + why + "; give --ops and --machine-id-mode to verify what apply used"
	}
	from := func(src string) string {
		switch src {
		case FromRecord:
			return "as apply recorded it"
		case FromOptions:
			return "as given"
		}
		return "assumed: " + why
	}
	return fmt.Sprintf("verifying --ops %s (%s) and --machine-id-mode %s (%s)", spec, from(sel.Operations), mode, from(sel.MachineIDMode))
}

// byID is the operations of all named by ids, in all's order, and the
// ids all does not have.
func byID(all []Operation, ids []string) ([]Operation, []string) {
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	var out []Operation
	for _, op := range all {
		if want[op.ID] {
			out = append(out, op)
			delete(want, op.ID)
		}
	}
	var unknown []string
	for _, id := range ids {
		if want[id] {
			unknown = append(unknown, id)
		}
	}
	return out, unknown
}

// Spec is the shortest --ops that selects ops out of all: "defaults", the
// defaults with changes ("-ssh-host-keys,+resolv-conf"), or the list.
func Spec(all, ops []Operation) string {
	on := map[string]bool{}
	var list []string
	for _, op := range ops {
		on[op.ID] = true
		list = append(list, op.ID)
	}
	var minus, plus []string
	for _, op := range all {
		switch {
		case op.Default && !on[op.ID]:
			minus = append(minus, "-"+op.ID)
		case !op.Default && on[op.ID]:
			plus = append(plus, "+"+op.ID)
		}
	}
	if len(minus)+len(plus) == 0 {
		return "defaults"
	}
	rel := strings.Join(append(minus, plus...), ",")
	if exp := strings.Join(list, ","); len(list) > 0 && len(exp) < len(rel) {
		return exp
	}
	return rel
}
