package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func fake(id string, st runner.Status) runner.Check {
	return runner.Check{ID: id, Title: "Fake " + id, Description: "returns " + string(st),
		Run: func(context.Context, *runner.Env) []runner.Finding {
			return []runner.Finding{{Status: st, Code: id + "-code", Message: id + " says " + string(st), Remediation: "do something"}}
		}}
}

// invoke runs the command with a private root and config so that no test
// reads this machine's own state.
func invoke(t *testing.T, all []runner.Check, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	base := []string{"--root", t.TempDir(), "--config", writeConfig(t, "")}
	code := run(append(base, args...), &out, &errb, all)
	return code, out.String(), errb.String()
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "guestcheck.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		checks []runner.Check
		extra  []string
		want   int
	}{
		{[]runner.Check{fake("a", runner.Pass), fake("b", runner.Skip)}, nil, 0},
		{[]runner.Check{fake("a", runner.Pass), fake("b", runner.Warn)}, nil, 2},
		{[]runner.Check{fake("a", runner.Warn), fake("b", runner.Fail)}, nil, 1},
		{[]runner.Check{fake("a", runner.Error)}, nil, 1},
		{[]runner.Check{fake("a", runner.Fail)}, []string{"--exit-zero"}, 0},
		{[]runner.Check{fake("a", runner.Warn)}, []string{"--exit-zero"}, 0},
		{[]runner.Check{fake("a", runner.Fail), fake("b", runner.Pass)}, []string{"--only", "b"}, 0},
		{[]runner.Check{fake("a", runner.Fail), fake("b", runner.Pass)}, []string{"--skip", "a"}, 0},
	} {
		code, out, errs := invoke(t, tc.checks, tc.extra...)
		if code != tc.want {
			t.Errorf("%v %v: exit %d, want %d\n%s%s", tc.checks, tc.extra, code, tc.want, out, errs)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	all := []runner.Check{fake("a", runner.Pass)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "guestcheck: --bogus: unknown option (see guestcheck --help)"},
		{[]string{"--format", "yaml"}, `--format "yaml"`},
		{[]string{"--only", "nope"}, `--only: unknown check ID "nope"`},
		{[]string{"--skip", "a,nope"}, `--skip: unknown check ID "nope"`},
		{[]string{"--timeout", "-1s"}, "must not be negative"},
		{[]string{"extra"}, `"extra": no such command (commands: probe, explain`},
		{[]string{"--root", "/nonexistent/guestcheck-test"}, "--root"},
	} {
		code, out, errs := invoke(t, all, tc.args...)
		if code != report.ExitUsage || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%v: exit %d stderr %q stdout %q; want 3 and %q", tc.args, code, errs, out, tc.want)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: error is not one line: %q", tc.args, errs)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	all := []runner.Check{fake("a", runner.Pass)}
	var out, errb bytes.Buffer
	bad := writeConfig(t, "timeout: 5s\nchecks:\n  a:\n    enabeld: true\n")
	code := run([]string{"--root", t.TempDir(), "--config", bad}, &out, &errb, all)
	if code != report.ExitUsage || !strings.Contains(errb.String(), bad+":4: checks.a.enabeld: unknown key; did you mean enabled? (known here: enabled, timeout)") {
		t.Errorf("typo in config: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	unknown := writeConfig(t, "checks:\n  nope: {enabled: false}\n")
	code = run([]string{"--root", t.TempDir(), "--config", unknown}, &out, &errb, all)
	if code != report.ExitUsage || !strings.Contains(errb.String(), `guestcheck.yaml:2: checks.nope: unknown check ID (see guestcheck --list)`) {
		t.Errorf("unknown check in config: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	code = run([]string{"--root", t.TempDir(), "--config", filepath.Join(t.TempDir(), "missing.yaml")}, &out, &errb, all)
	if code != report.ExitUsage {
		t.Errorf("missing explicit config: exit %d", code)
	}
}

func TestConfigDisablesCheck(t *testing.T) {
	all := []runner.Check{fake("a", runner.Fail), fake("b", runner.Pass)}
	var out, errb bytes.Buffer
	cfg := writeConfig(t, "checks:\n  a: {enabled: false}\n")
	if code := run([]string{"--root", t.TempDir(), "--config", cfg, "--format", "json"}, &out, &errb, all); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r report.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Checks) != 1 || r.Checks[0].ID != "b" {
		t.Errorf("checks run = %+v, want only b", r.Checks)
	}
	// --only still runs a check the config disabled.
	out.Reset()
	if code := run([]string{"--root", t.TempDir(), "--config", cfg, "--only", "a"}, &out, &errb, all); code != 1 {
		t.Errorf("--only a: exit %d, want 1", code)
	}
}

func TestHelpVersionList(t *testing.T) {
	all := []runner.Check{fake("alpha", runner.Pass), fake("beta", runner.Pass)}
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb, all); code != 0 || !strings.Contains(out.String(), "Exit codes:") {
		t.Errorf("--help: exit %d, %q", code, out.String())
	}
	for i, l := range strings.Split(out.String(), "\n") {
		if len(l) > 80 {
			t.Errorf("--help line %d is over 80 columns: %q", i+1, l)
		}
	}
	out.Reset()
	if code := run([]string{"--version"}, &out, &errb, all); code != 0 || !strings.HasPrefix(out.String(), "guestcheck ") {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"--list"}, &out, &errb, all); code != 0 || !strings.Contains(out.String(), "alpha") || !strings.Contains(out.String(), "returns pass") {
		t.Errorf("--list: exit %d, %q", code, out.String())
	}
}

func TestOutputFile(t *testing.T) {
	all := []runner.Check{fake("a", runner.Warn)}
	dir := t.TempDir()
	for _, format := range []string{"text", "json"} {
		p := filepath.Join(dir, "report."+format)
		code, out, errs := invoke(t, all, "--format", format, "--output", p)
		if code != 2 {
			t.Fatalf("%s: exit %d: %s", format, code, errs)
		}
		b, err := os.ReadFile(p)
		if err != nil || string(b) != out {
			t.Errorf("%s: file differs from stdout (%v)\nfile:\n%s\nstdout:\n%s", format, err, b, out)
		}
	}
	// Missing parents are made (mode 0755), as /run/guestcheck is missing
	// on a fresh guest when runcmd runs.
	made := filepath.Join(dir, "run/guestcheck/first-boot.json")
	if code, _, errs := invoke(t, all, "--exit-zero", "--format", "json", "--output", made); code != 0 || errs != "" {
		t.Errorf("missing parents: exit %d, %q", code, errs)
	}
	if st, err := os.Stat(filepath.Dir(made)); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("parent: %v %v", st, err)
	}
	if _, err := os.Stat(made); err != nil {
		t.Errorf("report not written: %v", err)
	}
	// A report that cannot be written is one line on stderr and exit 1,
	// --exit-zero or not: it keeps findings quiet, not a lost report.
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(blocker, "r.json")
	for _, extra := range [][]string{nil, {"--exit-zero"}} {
		code, _, errs := invoke(t, all, append(extra, "--output", bad)...)
		want := "guestcheck: --output " + bad + ": report not written: " + blocker + ": not a directory\n"
		if code != 1 || errs != want {
			t.Errorf("%v unwritable output: exit %d, %q; want 1, %q", extra, code, errs, want)
		}
	}
}

func TestRunTimeoutNeverHangs(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	stuck := runner.Check{ID: "stuck", Title: "Stuck", Description: "never returns",
		Run: func(context.Context, *runner.Env) []runner.Finding { <-block; return nil }}
	done := make(chan int, 1)
	go func() {
		code, _, _ := invoke(t, []runner.Check{stuck, fake("b", runner.Pass)}, "--timeout", "200ms", "--format", "json")
		done <- code
	}()
	select {
	case code := <-done:
		if code != 1 {
			t.Errorf("exit %d, want 1 (an unfinished check is an error)", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("guestcheck did not return after its --timeout")
	}
}

func TestWaitIgnoredUnderRoot(t *testing.T) {
	code, _, errs := invoke(t, []runner.Check{fake("a", runner.Pass)}, "--wait", "1h")
	if code != 0 || !strings.Contains(errs, "--wait ignored: needs the running system") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestFreezeTestNeedsTheCheck(t *testing.T) {
	code, _, errs := invoke(t, []runner.Check{fake("a", runner.Pass)}, "--freeze-test", "/data")
	if code != report.ExitUsage || !strings.Contains(errs, "--freeze-test needs the fs-freeze check") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestFreezeTestReachesTheCheck: --freeze-test is handed to the checks
// through Env.FreezeTest, with every --output path protected.
func TestFreezeTestReachesTheCheck(t *testing.T) {
	var got *runner.FreezeTest
	ff := fake("fs-freeze", runner.Pass)
	ff.Run = func(_ context.Context, env *runner.Env) []runner.Finding {
		got = env.FreezeTest
		return []runner.Finding{runner.Passf("fs-freeze-list-ok", "seen", nil)}
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if code, _, errs := invoke(t, []runner.Check{ff}, "--freeze-test", "/data", "--output", "json:"+out); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got == nil || got.Mountpoint != "/data" || len(got.Protect) != 1 || got.Protect[0] != out {
		t.Errorf("Env.FreezeTest = %+v, want /data protecting %s", got, out)
	}
}

func TestSummaryAndSeveralOutputs(t *testing.T) {
	all := []runner.Check{fake("a", runner.Warn), fake("b", runner.Pass)}
	dir := t.TempDir()
	js, txt := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.txt")
	code, out, errs := invoke(t, all, "--summary", "--output", "json:"+js, "--output", "text:"+txt)
	if code != 2 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "guestcheck: WARN (2 checks: 0 fail, 0 error, 1 warn, 1 pass, 0 skip) in "
	if !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
		t.Errorf("--summary stdout = %q, want one line starting %q", out, want)
	}
	var r report.Report
	if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &r) != nil || len(r.Checks) != 2 {
		t.Errorf("json output: %v %+v", err, r)
	}
	b, err := os.ReadFile(txt)
	if err != nil || !strings.Contains(string(b), "WARN  a") || !strings.HasSuffix(strings.TrimSpace(string(b)), strings.TrimSpace(out)) {
		t.Errorf("text output (%v):\n%s", err, b)
	}
	if code, _, errs := invoke(t, all, "--output", "json:"); code != report.ExitUsage {
		t.Errorf("empty output name: exit %d %q", code, errs)
	}
}

// TestSummaryNamesFailing: the --summary line, which the boot unit puts on
// the console, names the checks that failed and could not run.
func TestSummaryNamesFailing(t *testing.T) {
	all := []runner.Check{fake("a", runner.Fail), fake("b", runner.Error), fake("c", runner.Pass)}
	code, out, _ := invoke(t, all, "--summary")
	if code != 1 || !strings.HasPrefix(out, "guestcheck: FAIL (3 checks: 1 fail, 1 error, 0 warn, 1 pass, 0 skip) in ") ||
		!strings.HasSuffix(out, " ms; fail: a; error: b\n") {
		t.Errorf("--summary: exit %d %q", code, out)
	}
}

// TestEveryFormat runs each format to stdout and to --output: the same
// bytes both ways, nothing on stderr, and the exit code of the findings
// whatever the format.
func TestEveryFormat(t *testing.T) {
	all := []runner.Check{fake("a", runner.Warn), fake("b", runner.Pass)}
	dir := t.TempDir()
	for _, f := range report.Formats {
		p := filepath.Join(dir, "r."+string(f))
		code, out, errs := invoke(t, all, "--format", string(f), "--output", string(f)+":"+p)
		if code != report.ExitWarn || errs != "" || out == "" {
			t.Errorf("%s: exit %d, stderr %q, %d bytes on stdout", f, code, errs, len(out))
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != out {
			t.Errorf("%s: --output file differs from stdout (%v)", f, err)
		}
	}
}

// TestJUnitStdoutIsOnlyXML: a Packer or CI step redirects stdout to the
// file it uploads, so messages (here --wait's) must go to stderr.
func TestJUnitStdoutIsOnlyXML(t *testing.T) {
	code, out, errs := invoke(t, []runner.Check{fake("a", runner.Fail)}, "--format", "junit", "--wait", "1s")
	if code != report.ExitProblem || !strings.Contains(errs, "--wait ignored") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	// Walk the tokens: one root element, nothing but whitespace outside it.
	dec := xml.NewDecoder(strings.NewReader(out))
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("stdout is not XML: %v\n%s", err, out)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && strings.TrimSpace(string(tk)) != "" {
				t.Fatalf("text outside the document: %q", tk)
			}
		}
	}
	if roots != 1 {
		t.Errorf("%d root elements on stdout, want 1", roots)
	}
	if !strings.HasPrefix(out, "<?xml") || !strings.HasSuffix(out, "</testsuites>\n") {
		t.Errorf("stdout is not one JUnit document:\n%s", out)
	}
}

// TestNagiosExitCodes: --exit-codes nagios, and only it, switches to the
// plugin return codes; --format nagios alone keeps guestcheck's.
func TestNagiosExitCodes(t *testing.T) {
	nag := []string{"--exit-codes", "nagios"}
	for _, tc := range []struct {
		checks []runner.Check
		extra  []string
		want   int
		word   string
	}{
		{[]runner.Check{fake("a", runner.Pass), fake("b", runner.Skip)}, nag, report.NagiosOK, "OK"},
		{[]runner.Check{fake("a", runner.Pass), fake("b", runner.Warn)}, nag, report.NagiosWarning, "WARNING"},
		{[]runner.Check{fake("a", runner.Warn), fake("b", runner.Fail)}, nag, report.NagiosCritical, "CRITICAL"},
		{[]runner.Check{fake("a", runner.Warn), fake("b", runner.Error)}, nag, report.NagiosUnknown, "UNKNOWN"},
		{[]runner.Check{fake("a", runner.Skip)}, nag, report.NagiosUnknown, "UNKNOWN"},
		// Without the option the format changes nothing: warn is still 2.
		{[]runner.Check{fake("a", runner.Pass), fake("b", runner.Warn)}, nil, report.ExitWarn, "WARNING"},
		{[]runner.Check{fake("a", runner.Fail)}, nil, report.ExitProblem, "CRITICAL"},
	} {
		args := append([]string{"--format", "nagios", "--service-name", "VM"}, tc.extra...)
		code, out, errs := invoke(t, tc.checks, args...)
		if code != tc.want || !strings.HasPrefix(out, "VM "+tc.word+": ") || errs != "" {
			t.Errorf("%v %v: exit %d, stdout %q, stderr %q; want %d and %s", tc.checks, tc.extra, code, out, errs, tc.want, tc.word)
		}
	}
	// The option works with any format.
	if code, _, _ := invoke(t, []runner.Check{fake("a", runner.Warn)}, "--format", "json", "--exit-codes", "nagios"); code != report.NagiosWarning {
		t.Errorf("--format json --exit-codes nagios with a warning: exit %d, want 1", code)
	}
	// An unwritable --output is UNKNOWN, unless the run is CRITICAL anyway.
	blocker := filepath.Join(t.TempDir(), "blocker")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(blocker, "r.txt")
	if code, _, _ := invoke(t, []runner.Check{fake("a", runner.Pass)}, "--exit-codes", "nagios", "--output", bad); code != report.NagiosUnknown {
		t.Errorf("unwritable output on a pass: exit %d, want 3", code)
	}
	if code, _, _ := invoke(t, []runner.Check{fake("a", runner.Fail)}, "--exit-codes", "nagios", "--output", bad); code != report.NagiosCritical {
		t.Errorf("unwritable output on a fail: exit %d, want 2", code)
	}
	// --help, --version and --list are UNKNOWN for a plugin.
	for _, a := range [][]string{{"--exit-codes", "nagios", "--help"}, {"--exit-codes", "nagios", "--version"}, {"--exit-codes", "nagios", "--list"}} {
		var out, errb bytes.Buffer
		if code := run(a, &out, &errb, []runner.Check{fake("a", runner.Pass)}); code != report.NagiosUnknown {
			t.Errorf("%v: exit %d, want 3", a, code)
		}
	}
}

func TestFormatOptionErrors(t *testing.T) {
	all := []runner.Check{fake("a", runner.Pass)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--exit-codes", "nrpe"}, `--exit-codes "nrpe": unknown scheme (one of guestcheck, nagios)`},
		{[]string{"--exit-codes", "nagios", "--exit-zero"}, "contradict"},
		{[]string{"--service-name", "A|B"}, "--service-name: service name must not contain '|'"},
		{[]string{"--service-name", ""}, "--service-name: service name is empty"},
		{[]string{"--output", "tap:"}, `--output tap:: no file name after "tap:"`},
		{[]string{"--format", "xml"}, `--format "xml": unknown format (one of text, json, prometheus, nagios, junit, tap, jsonl)`},
	} {
		code, out, errs := invoke(t, all, tc.args...)
		if code != report.ExitUsage || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want 3 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestPrometheusOutputReplacesAtomically: node_exporter may read the .prom
// file at any moment, so --output replaces it by rename (a new inode) and
// leaves no temporary file the collector could pick up.
func TestPrometheusOutputReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "guestcheck.prom")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(p)
	code, _, errs := invoke(t, []runner.Check{fake("a", runner.Pass)}, "--summary", "--output", "prometheus:"+p)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	after, err := os.Stat(p)
	if err != nil || os.SameFile(before, after) {
		t.Errorf("the .prom file was not replaced by a new one (%v)", err)
	}
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `guestcheck_check_status{check="a",status="pass"} 1`) || after.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, content:\n%s", after.Mode().Perm(), b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only guestcheck.prom: %v", len(ents), ents)
	}
}

// TestNagiosUsageErrorOnStdout: Nagios shows only stdout, so a mistake in
// the configuration is an UNKNOWN status line there too.
func TestNagiosUsageErrorOnStdout(t *testing.T) {
	code, out, errs := invoke(t, []runner.Check{fake("a", runner.Pass)}, "--format", "nagios", "--exit-codes", "nagios", "--only", "nope")
	want := `GUESTCHECK UNKNOWN: --only: unknown check ID "nope" (see --list)` + "\n"
	if code != report.NagiosUnknown || out != want || !strings.Contains(errs, "unknown check ID") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 3 and %q", code, out, errs, want)
	}
}

// TestFreezeTestRefusedUpFront: on the running system a --freeze-test
// path that could never be frozen (missing, not a directory, not a mount
// point) is a usage error, exit 3, before any check runs.
func TestFreezeTestRefusedUpFront(t *testing.T) {
	ran := false
	ff := fake("fs-freeze", runner.Pass)
	ff.Run = func(context.Context, *runner.Env) []runner.Finding {
		ran = true
		return []runner.Finding{runner.Passf("fs-freeze-list-ok", "seen", nil)}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for mp, want := range map[string]string{
		filepath.Join(dir, "missing"): "no such directory",
		file:                          "not a directory",
		dir:                           "not a mount point",
	} {
		var out, errb bytes.Buffer
		code := run([]string{"--freeze-test", mp}, &out, &errb, []runner.Check{ff})
		if code != report.ExitUsage || !strings.Contains(errb.String(), "--freeze-test "+mp+": "+want) || ran {
			t.Errorf("--freeze-test %s: exit %d, ran %v, stderr %q", mp, code, ran, errb.String())
		}
	}
}

// TestOutputFormatFromExtension: an --output with no FMT: prefix takes
// its format from a known extension, else from --format; an explicit
// prefix wins over the extension.
func TestOutputFormatFromExtension(t *testing.T) {
	all := []runner.Check{fake("a", runner.Warn)}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	code, out, errs := invoke(t, all, "--output", p("r.json"), "--output", p("r.prom"), "--output", p("r.xml"),
		"--output", p("r.tap"), "--output", p("r.jsonl"), "--output", p("r.TXT"), "--output", p("r.out"), "--output", "text:"+p("t.json"))
	if code != 2 || errs != "" {
		t.Fatalf("exit %d, %q", code, errs)
	}
	for name, f := range map[string]report.Format{"r.json": report.FormatJSON, "r.prom": report.FormatPrometheus,
		"r.xml": report.FormatJUnit, "r.tap": report.FormatTAP, "r.jsonl": report.FormatJSONL, "r.TXT": report.FormatText,
		"r.out": report.FormatText, "t.json": report.FormatText} {
		want, _ := render(mustReport(t, p("r.json")), f, report.Options{})
		got, err := os.ReadFile(p(name))
		if err != nil {
			t.Fatal(err)
		}
		// Each format's first line tells it from the others ("{" alone
		// is json, a whole object jsonl).
		if first(got) != first(want) {
			t.Errorf("%s: starts %q, want %s's %q", name, first(got), f, first(want))
		}
	}
	if !strings.Contains(out, "WARN") || json.Valid([]byte(out)) {
		t.Errorf("stdout is not the text report: %q", out)
	}
	// --format applies to a name with no known extension.
	if code, _, errs := invoke(t, all, "--format", "json", "--output", p("plain")); code != 2 || errs != "" {
		t.Fatalf("--format json --output plain: exit %d, %q", code, errs)
	}
	if b, _ := os.ReadFile(p("plain")); !json.Valid(b) {
		t.Errorf("--format json --output plain: not JSON: %q", b)
	}
}

// TestOutputStdout: --output - is standard output, never a file named
// "-"; with FMT: it sets what standard output gets.
func TestOutputStdout(t *testing.T) {
	all := []runner.Check{fake("a", runner.Pass)}
	t.Chdir(t.TempDir())
	code, out, errs := invoke(t, all, "--output", "json:-", "--output", "text:r.txt")
	if code != 0 || errs != "" || !json.Valid([]byte(out)) {
		t.Fatalf("--output json:-: exit %d, %q, stdout %q", code, errs, out)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("--output json:- made a file named -")
	}
	if b, err := os.ReadFile("r.txt"); err != nil || json.Valid(b) || !strings.Contains(string(b), "PASS") {
		t.Errorf("r.txt beside json:- is not text: %q %v", b, err)
	}
	code, out, _ = invoke(t, all, "--format", "tap", "--output", "-")
	if code != 0 || !strings.HasPrefix(out, "TAP version 13") {
		t.Errorf("--format tap --output -: exit %d, %q", code, out)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("--output - made a file named -")
	}
}

// mustReport reads a JSON report guestcheck wrote.
func mustReport(t *testing.T, p string) report.Report {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// first is b's first line.
func first(b []byte) string {
	l, _, _ := strings.Cut(string(b), "\n")
	return l
}
