//go:build vmtest

package vm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// templates builds, from the unsealed template, every other template
// sealprep prove is run on, without a boot: the sealed GPT disk (with the
// offline seal's assertions), the machine-id-cmdline leak, a virt-sysprep
// run, and two edits of the sealed root (no agent, no boot).
func templates(ctx context.Context, t *testing.T, e *env) {
	t.Run("seal-gpt", func(t *testing.T) { sealGPT(ctx, t, e) }) // image_seal_test.go
	t.Run("leak-path", func(t *testing.T) { leakPath(ctx, t, e) })
	t.Run("virt-sysprep", func(t *testing.T) {
		img := filepath.Join(e.scratch, "virt-sysprep.img")
		mid := virtSysprepTemplate(ctx, t, e.img, e.unsealed, img)
		if mid == e.template.machineID {
			t.Errorf("virt-sysprep kept the template's machine-id")
		}
		e.virtSysprep.image, e.virtSysprep.machineID = img, mid
	})
	if e.sealedRoot == "" {
		t.Fatal("no sealed root: seal-gpt did not finish")
	}
	t.Run("no-agent", func(t *testing.T) {
		img := filepath.Join(e.scratch, "no-agent.img")
		editTemplate(ctx, t, e.sealedRoot, img, maskAgent)
		e.noAgent = img
	})
	t.Run("no-boot", func(t *testing.T) {
		img := filepath.Join(e.scratch, "no-boot.img")
		editTemplate(ctx, t, e.sealedRoot, img, breakFstab)
		e.noBoot = img
	})
	t.Run("regen-keys", func(t *testing.T) {
		img := filepath.Join(e.scratch, "regen-keys.img")
		editTemplate(ctx, t, e.sealedRoot, img, regenKeys)
		e.regenKeys = img
	})
}

// proveRun is one `sealprep prove` run: its exit code, its JSON report
// (and the bytes of it, which must never hold a machine-id), its JUnit
// file and how long it took.
type proveRun struct {
	exit    int
	rep     prove.Report
	json    []byte
	junit   []byte
	elapsed time.Duration
	keep    string // --keep's directory
}

// keptConsole returns a clone's serial console as --keep kept it.
func (r *proveRun) keptConsole(t *testing.T, clone string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(r.keep, "prove-*", clone, "console.log"))
	if len(m) != 1 {
		t.Fatalf("--keep %s: want one console of %s, found %v", r.keep, clone, m)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runProve runs `sealprep prove` on img with JSON on stdout, the JUnit
// report to a file (validated against both stored schemas), and --keep
// under the run's scratch directory (the consoles, for a failure). Under
// TCG, as every guest of these tests (docs/vm-tests.md: KVM does not run
// guests on these machines).
func runProve(ctx context.Context, t *testing.T, e *env, name, img, userData string, clones int, timeout time.Duration, extra ...string) *proveRun {
	t.Helper()
	dir := filepath.Join(e.scratch, "prove-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ud := filepath.Join(dir, "user-data")
	if err := os.WriteFile(ud, []byte(userData), 0o644); err != nil {
		t.Fatal(err)
	}
	junit, keep := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "keep")
	args := append([]string{"prove", "--image", img, "--clones", fmt.Sprint(clones), "--accel", "tcg",
		"--timeout", timeout.String(), "--user-data", ud, "--format", "json", "--junit", junit,
		"--keep", keep}, extra...)
	// The run's own deadline plus a margin: prove must end by itself.
	pctx, cancel := context.WithTimeout(ctx, timeout+2*time.Minute)
	defer cancel()
	c := exec.CommandContext(pctx, e.sealprep, args...)
	c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+e.stateDir())
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	r := &proveRun{exit: c.ProcessState.ExitCode(), json: stdout.Bytes(), elapsed: time.Since(start), keep: keep}
	t.Logf("sealprep %s: exit %d after %s; progress:\n%s", strings.Join(args, " "), r.exit, r.elapsed.Round(time.Second), strings.TrimSpace(stderr.String()))
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("sealprep prove: %v", err)
	}
	// With GUESTCHECK_VM_CAPTURE=DIR the report is kept as
	// DIR/prove-NAME.json, the source of the real reports in the docs.
	if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "prove-"+name+".json"), r.json, 0o644); err != nil {
			t.Errorf("capture: %v", err)
		}
	}
	// The report is checked with the rules its schema is generated from
	// before it is read, as guestcheck fleet --merge reads a survey.
	if err := reportv1.CheckJSON(r.json, reflect.TypeFor[prove.Report](), prove.ReportTypes()); err != nil {
		t.Fatalf("sealprep prove --format json: not a report of schema/prove-v1.schema.json: %v\n%s", err, tail(stdout.String(), 40))
	}
	if err := json.Unmarshal(r.json, &r.rep); err != nil {
		t.Fatalf("sealprep prove --format json: %v\n%s", err, tail(stdout.String(), 40))
	}
	if r.rep.SchemaVersion != 1 || r.rep.Tool != "sealprep" || r.rep.Command != "prove" {
		t.Errorf("not a sealprep prove schema 1 report: %d %q %q", r.rep.SchemaVersion, r.rep.Tool, r.rep.Command)
	}
	if r.rep.Accel != "tcg" || r.rep.AccelReason == "" {
		t.Errorf("accel %q (%q), want tcg and why", r.rep.Accel, r.rep.AccelReason)
	}
	if want := prove.ExitCode(r.rep); r.exit != want {
		t.Errorf("exit %d, but the report (proven %v) says %d", r.exit, r.rep.Proven, want)
	}
	if r.junit, err = os.ReadFile(junit); err != nil {
		t.Fatalf("--junit: %v", err)
	}
	validateJUnit(ctx, t, junit)
	// --keep keeps the report each clone was judged by, beside its console.
	for _, c := range r.rep.Clones {
		if c.VerdictSource != prove.SourceAgent {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(keep, "prove-*", c.Name, "report.json"))
		if len(m) != 1 {
			t.Errorf("--keep %s: want the report %s was judged by, found %v", keep, c.Name, m)
		}
	}
	logProve(t, r)
	return r
}

// validateJUnit holds a JUnit file to both XSDs in schema/junit, as the
// report package's tests hold guestcheck's own.
func validateJUnit(ctx context.Context, t *testing.T, file string) {
	t.Helper()
	for _, xsd := range []string{"../../schema/junit/junit-10.xsd", "../../schema/junit/JUnit.xsd"} {
		if out, err := run(ctx, "xmllint", "--noout", "--schema", xsd, file); err != nil {
			t.Errorf("%s against %s: %v\n%s", file, filepath.Base(xsd), err, out)
		}
	}
}

// logProve logs what a run saw, per clone and per item: the figures
// docs/vm-tests.md quotes come from here.
func logProve(t *testing.T, r *proveRun) {
	t.Helper()
	rep := r.rep
	t.Logf("proven %v, firmware %s (%s), %d ms, prove's peak RSS %d KiB", rep.Proven, rep.Firmware, rep.FirmwareReason, rep.DurationMS, rep.PeakRSSKiB)
	for _, c := range rep.Clones {
		v := "no verdict"
		if c.Verdict != nil {
			v = fmt.Sprintf("%s from the %s", c.Verdict.Status, c.VerdictSource)
		}
		t.Logf("  %s: boot %s, %s; failing %v; notes %v; timings %+v", c.Name, c.Boot, v, c.Failing, c.Notes, c.Timings)
		if c.Problem != "" {
			t.Logf("  %s: %s\n    console tail:\n    %s", c.Name, c.Problem, strings.Join(c.ConsoleTail, "\n    "))
		}
	}
	for _, it := range rep.Items {
		t.Logf("  %s: %s (%s)", it.Item, it.Status, it.Detail)
	}
	for _, f := range rep.Failures {
		t.Logf("  failure: %s", f.Message)
	}
}

// item returns the result for one identity item.
func (r *proveRun) item(t *testing.T, it guestid.Item) prove.ItemResult {
	t.Helper()
	for _, x := range r.rep.Items {
		if x.Item == it {
			return x
		}
	}
	t.Errorf("the report has no item %s", it)
	return prove.ItemResult{}
}

// expectItems asserts each item's status.
func (r *proveRun) expectItems(t *testing.T, status string, items ...guestid.Item) {
	t.Helper()
	for _, it := range items {
		if got := r.item(t, it); got.Status != status {
			t.Errorf("item %s is %s (%s), want %s", it, got.Status, got.Detail, status)
		}
	}
}

// collision returns the collisions of item.
func (r *proveRun) collisions(it guestid.Item) []guestid.Collision {
	var out []guestid.Collision
	for _, c := range r.rep.Collisions {
		if c.Item == it {
			out = append(out, c)
		}
	}
	return out
}

// expectCollision asserts that item value is shared by exactly members,
// with the fix, and that a failure names it.
func (r *proveRun) expectCollision(t *testing.T, it guestid.Item, value string, members ...string) {
	t.Helper()
	for _, c := range r.collisions(it) {
		if c.Value != value {
			continue
		}
		if !slices.Equal(c.Members, members) {
			t.Errorf("%s %s shared by %v, want %v", it, value, c.Members, members)
		}
		if c.Fix != guestid.Fix(it) {
			t.Errorf("%s: fix %q, want %q", it, c.Fix, guestid.Fix(it))
		}
		if !slices.ContainsFunc(r.rep.Failures, func(f prove.Failure) bool { return f.Item == it && f.Fix == c.Fix }) {
			t.Errorf("no failure names the shared %s", it)
		}
		return
	}
	t.Errorf("no collision on %s %s among %+v", it, value, r.collisions(it))
}

// expectJUnit asserts the JUnit report's failing test cases: "boots" for
// exactly the clones given, a case for each check the clone's JSON report
// says failed, and exactly the items given; and one case per clone, per
// check of each clone (or one for its console verdict) and per item.
func (r *proveRun) expectJUnit(t *testing.T, noBoot []string, items []guestid.Item) {
	t.Helper()
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xmlUnmarshal(r.junit, &doc); err != nil {
		t.Fatalf("junit: %v", err)
	}
	var failed []string
	cases := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil {
				failed = append(failed, s.Name+"/"+c.Name)
			}
		}
	}
	var want []string
	for _, c := range noBoot {
		want = append(want, "clones/"+c+": boots")
	}
	wantCases := len(guestid.GuestItems) // prove compares what guests report, not the host-defined firmware items
	budget := 0
	if r.rep.BootBudgetMS > 0 {
		budget = 1 // a case per boot: within the boot budget
	}
	for _, c := range r.rep.Clones {
		wantCases += 1 + max(1, len(c.Checks)) + budget
		for _, k := range c.Checks {
			if k.Status == "fail" {
				want = append(want, "clones/"+c.Name+": "+k.ID)
			}
		}
		// --reboot: the second boot's own cases, one per item compared
		// across the reboot.
		if rb := c.Reboot; rb != nil {
			wantCases += 1 + max(1, len(rb.Checks)) + len(prove.RebootItems) + budget
			for _, k := range rb.Checks {
				if k.Status == "fail" {
					want = append(want, "clones/"+c.Name+": reboot: "+k.ID)
				}
			}
			for _, ch := range rb.Changed {
				if ch.Item == prove.ItemFirstBoot {
					want = append(want, "clones/"+c.Name+": reboot: first-boot work not repeated")
				} else {
					want = append(want, "clones/"+c.Name+": reboot: "+ch.Item+" stable")
				}
			}
		}
	}
	for _, f := range r.rep.Failures {
		if strings.Contains(f.Message, "--boot-budget") {
			step := ""
			if f.Step != "" {
				step = f.Step + ": "
			}
			want = append(want, "clones/"+f.Clone+": "+step+"within the boot budget")
		}
	}
	for _, it := range items {
		want = append(want, "identity/"+string(it)+": not shared")
	}
	if cases != wantCases {
		t.Errorf("junit: %d test cases, want %d: per clone one for its boot and one per check (or its console verdict), and one per identity item", cases, wantCases)
	}
	slices.Sort(failed)
	slices.Sort(want)
	if !slices.Equal(failed, want) {
		t.Errorf("junit: failing test cases %q, want %q", failed, want)
	}
}

// noMachineID asserts that no report carries a machine-id in clear
// (machine-id(5): only a keyed hash may leave the guest).
func (r *proveRun) noMachineID(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if id != "" && (bytes.Contains(r.json, []byte(id)) || bytes.Contains(r.junit, []byte(id))) {
			t.Errorf("a report holds the machine-id %s in clear", id)
		}
	}
}

// cloneNames are the clones' names in a report.
func (r *proveRun) cloneNames() []string {
	var out []string
	for _, c := range r.rep.Clones {
		out = append(out, c.Name)
	}
	return out
}

// hashOf is the machine-id's hash as prove and guestcheck report it.
func hashOf(t *testing.T, machineID string) string {
	t.Helper()
	h, ok := guestid.MachineIDHash(machineID)
	if !ok {
		t.Fatalf("%q is not a machine-id", machineID)
	}
	return h
}
