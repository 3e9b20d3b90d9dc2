package agree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// action is one entry of sealprep verify's JSON "actions": an identity
// item still present ("planned") or a tidy change ("warn").
type action struct {
	Op     string `json:"op"`
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Status string `json:"status"`
}

// verifyReport is the part of `sealprep verify --format json` the test reads.
type verifyReport struct {
	Status   string   `json:"status"`
	Actions  []action `json:"actions"`
	Refusals []struct {
		Op, Path, Message string
	} `json:"refusals"`
	Errors []struct{ Op, Error string } `json:"errors"`
}

// checkReport is guestcheck's JSON report, its own type.
type checkReport = reportv1.Report

// guestRoot is one root to judge: its name and how to make it.
type guestRoot struct {
	name  string
	about string // the spec, or what a hand-made root is
	make  func(t testing.TB, dir string)
}

// verdicts is what the two binaries said about one root.
type verdicts struct {
	verify verifyReport
	check  checkReport
}

func runJSON(t testing.TB, v any, name string, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), err)
	}
	if jerr := json.Unmarshal(out.Bytes(), v); jerr != nil {
		t.Fatalf("%s %s: %v (exit %v): not JSON: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, errb.String(), jerr, out.String())
	}
}

func judge(t testing.TB, dir string) verdicts {
	var v verdicts
	runJSON(t, &v.verify, bin.sealprep, "verify", "--root", dir, "--format", "json")
	runJSON(t, &v.check, bin.guestcheck, "--root", dir, "--format", "json", "--config", bin.config,
		"--only", strings.Join(judgedChecks(), ","))
	return v
}

// leftovers lists what verify still finds of it (empty: sealed for it).
// A refusal or error of no operation (preflight: not an OS root) leaves
// every item unsealed.
func (v verdicts) leftovers(it item) []string {
	var out []string
	for _, a := range v.verify.Actions {
		if a.Status == "planned" && it.hasOp(a.Op) && (it.match == nil || it.match(a)) {
			out = append(out, a.Kind+" "+a.Path)
		}
	}
	for _, r := range v.verify.Refusals {
		if r.Op == "" || it.hasOp(r.Op) {
			out = append(out, "refused "+r.Path)
		}
	}
	for _, e := range v.verify.Errors {
		if e.Op == "" || it.hasOp(e.Op) {
			out = append(out, "error in "+e.Op)
		}
	}
	return out
}

// Per-item verdicts of sealprep verify.
const (
	sealed            = "SEALED"
	sealedWithWarning = "SEALED-WITH-WARNING" // only tidy changes left (verify's warnings)
	notSealed         = "NOT-SEALED"
)

// verdict is what verify says about it. A tidy action (a mode, content
// systemd ignores) is verify's warning: the item is sealed, and
// guestcheck may warn about the same thing, but not fail.
func (v verdicts) verdict(it item) string {
	if len(v.leftovers(it)) > 0 {
		return notSealed
	}
	for _, a := range v.verify.Actions {
		if a.Status == "warn" && it.hasOp(a.Op) && (it.match == nil || it.match(a)) {
			return sealedWithWarning
		}
	}
	return sealed
}

// disagrees reports whether guestcheck's findings about an item
// contradict verify's verdict.
func disagrees(verdict string, fs []string) bool {
	for _, f := range fs {
		if verdict == sealed || verdict == sealedWithWarning && strings.HasPrefix(f, "fail ") {
			return true
		}
	}
	return false
}

// findings lists guestcheck's warnings and failures about it.
func (v verdicts) findings(it item) []string {
	var out []string
	for _, c := range v.check.Checks {
		if c.ID != it.check {
			continue
		}
		for _, f := range c.Findings {
			if (f.Status == "warn" || f.Status == "fail") && it.hasCode(f.Code) {
				out = append(out, string(f.Status)+" "+f.Code)
			}
		}
	}
	return out
}

// template reports whether guestcheck judged the root as a sealed
// template: its machine-id finding carries the `template` detail
// (identity.TemplateState, decided once for every check).
func (v verdicts) template() bool {
	for _, c := range v.check.Checks {
		if c.ID != "network-identity" {
			continue
		}
		for _, f := range c.Findings {
			if strings.HasPrefix(f.Code, "identity-machine-id-") && f.Detail["template"] != "" {
				return true
			}
		}
	}
	return false
}

// modeMismatch names a check that judged the root in the other mode
// than network-identity did, "" when all agree: the decision is made once,
// so hostname's findings, and ssh's host key findings, carry the
// `template` detail exactly when the root is a template.
func (v verdicts) modeMismatch() string {
	tpl := v.template()
	for _, c := range v.check.Checks {
		if c.ID != "hostname" && c.ID != "ssh" {
			continue
		}
		carries, judged := false, c.ID == "hostname" && len(c.Findings) > 0
		for _, f := range c.Findings {
			carries = carries || f.Detail["template"] != ""
			judged = judged || strings.HasPrefix(f.Code, "ssh-hostkey-")
		}
		if judged && carries != tpl {
			return c.ID
		}
	}
	return ""
}

// machineIDItem is the item that anchors the template decision.
const machineIDItem = "machine-id"

// allRoots is every root the test judges: the generated ones, then the
// hand-made ones.
func allRoots() []guestRoot {
	var roots []guestRoot
	for i, s := range genSpecs(240) {
		roots = append(roots, guestRoot{name: fmt.Sprintf("gen-%03d", i), about: s.String(),
			make: func(t testing.TB, dir string) { buildRoot(t, dir, specNodes(s)) }})
	}
	return append(roots, handRoots()...)
}

// TestAgreement judges every root with both binaries and lists, one line
// each, every disagreement. On a root guestcheck judges as a sealed
// template, an item sealprep calls sealed must draw no warning or failure
// from guestcheck (no failure, when verify only warns of a tidy change).
// A root guestcheck judges as a guest (its machine ID is set) must be one
// whose machine-id sealprep would still reset; its other items are judged
// by a guest's standards and only counted. The reverse (a leftover
// guestcheck passes) is not a disagreement either: on a guest it is the
// guest's own identity.
func TestAgreement(t *testing.T) {
	roots := allRoots()
	results := make([]verdicts, len(roots))
	base := t.TempDir()
	t.Run("roots", func(t *testing.T) {
		for i, r := range roots {
			t.Run(r.name, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(base, r.name)
				r.make(t, dir)
				results[i] = judge(t, dir)
			})
		}
	})
	if t.Failed() {
		return
	}

	var lines []string
	disagreeing := map[int]bool{}
	nTemplates := 0
	for i, r := range roots {
		if c := results[i].modeMismatch(); c != "" {
			lines = append(lines, fmt.Sprintf("%s: guestcheck's %s check judged it in another mode than network-identity (template %v)", r.name, c, results[i].template()))
			disagreeing[i] = true
		}
		if results[i].template() {
			nTemplates++
			continue
		}
		// guestcheck judges a guest only where sealprep would still
		// reset the machine ID: the two agree on what is a template.
		if mid := itemNamed(machineIDItem); results[i].verdict(mid) != notSealed {
			lines = append(lines, fmt.Sprintf("%s %s: sealprep %s, guestcheck judged a guest (the machine ID is set)", r.name, mid.name, results[i].verdict(mid)))
			disagreeing[i] = true
		}
	}
	t.Logf("guestcheck judged %d of %d roots as sealed templates, the rest as guests", nTemplates, len(roots))
	for _, it := range items {
		nSealed, silent, guest := 0, []string{}, []string{}
		for i, r := range roots {
			verdict, fs := results[i].verdict(it), results[i].findings(it)
			switch {
			case disagrees(verdict, fs) && !results[i].template():
				// A guest is judged by a guest's standards (a static
				// hostname, host keys sshd has now): not comparable.
				guest = append(guest, r.name)
			case disagrees(verdict, fs):
				lines = append(lines, fmt.Sprintf("%s %s: sealprep %s, guestcheck %s", r.name, it.name, verdict, strings.Join(fs, ", ")))
				disagreeing[i] = true
			case verdict == notSealed && len(fs) == 0:
				silent = append(silent, r.name)
			}
			if verdict != notSealed {
				nSealed++
			}
		}
		// Not disagreements: a leftover guestcheck passes (on a guest, the
		// guest's own identity), and a guest's findings about an item
		// sealprep would leave as it is.
		t.Logf("%s: sealed in %d of %d roots; left by sealprep with no guestcheck finding in %d%s; guest findings on a sealed item in %d%s",
			it.name, nSealed, len(roots), len(silent), examples(silent), len(guest), examples(guest))
	}
	if len(lines) == 0 {
		return
	}
	t.Errorf("%d disagreements in %d of %d roots (root item: verdicts):\n%s", len(lines), len(disagreeing), len(roots), strings.Join(lines, "\n"))
	var legend []string
	for i, r := range roots {
		if disagreeing[i] {
			legend = append(legend, r.name+": "+r.about)
		}
	}
	t.Logf("the disagreeing roots:\n%s", strings.Join(legend, "\n"))
}

// TestTable holds the table to both binaries: every operation it names
// is one of sealprep's, every code one of its check's, and every code of
// the judged checks is placed, in an item or as not identity.
func TestTable(t *testing.T) {
	var list []struct {
		ID string `json:"id"`
	}
	var raw struct {
		Operations json.RawMessage `json:"operations"`
	}
	runJSON(t, &raw, bin.sealprep, "list", "--format", "json")
	if err := json.Unmarshal(raw.Operations, &list); err != nil {
		t.Fatalf("sealprep list --format json: operations: %v", err)
	}
	ops := map[string]bool{}
	for _, o := range list {
		ops[o.ID] = true
	}
	placed := map[string]string{}
	for _, it := range items {
		for _, op := range it.ops {
			if !ops[op] {
				t.Errorf("item %s: sealprep has no operation %q", it.name, op)
			}
		}
		for _, c := range it.codes {
			placed[c] = it.check
		}
	}
	for id, cs := range notIdentity {
		for _, c := range cs {
			placed[c] = id
		}
	}
	for _, id := range judgedChecks() {
		c, ok := checks.ByID(id)
		if !ok {
			t.Errorf("guestcheck has no check %s", id)
			continue
		}
		for _, code := range c.Codes {
			if placed[code.ID] != id {
				t.Errorf("check %s: code %s is neither in an item nor listed as not identity", id, code.ID)
			}
		}
		var missing []string
		for code, owner := range placed {
			if owner == id && !c.Has(code) {
				missing = append(missing, code)
			}
		}
		sort.Strings(missing)
		for _, code := range missing {
			t.Errorf("check %s does not register code %s, which the table names", id, code)
		}
	}
}

// itemNamed is the table's item called name.
func itemNamed(name string) item {
	for _, it := range items {
		if it.name == name {
			return it
		}
	}
	panic("agree: no item " + name)
}

// examples names the first few of roots for a log line.
func examples(roots []string) string {
	if len(roots) == 0 {
		return ""
	}
	if len(roots) > 4 {
		return " (" + strings.Join(roots[:4], ", ") + ", ...)"
	}
	return " (" + strings.Join(roots, ", ") + ")"
}
