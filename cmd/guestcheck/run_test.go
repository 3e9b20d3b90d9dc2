package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/report"
)

func fake(id string, st check.Status) check.Check {
	return check.Check{ID: id, Title: "Fake " + id, Description: "returns " + string(st),
		Run: func(context.Context, *check.Env) []check.Finding {
			return []check.Finding{{Status: st, Code: id + "-code", Message: id + " says " + string(st), Remediation: "do something"}}
		}}
}

// invoke runs the command with a private root and config so that no test
// reads this machine's own state.
func invoke(t *testing.T, all []check.Check, args ...string) (int, string, string) {
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
		checks []check.Check
		extra  []string
		want   int
	}{
		{[]check.Check{fake("a", check.Pass), fake("b", check.Skip)}, nil, 0},
		{[]check.Check{fake("a", check.Pass), fake("b", check.Warn)}, nil, 2},
		{[]check.Check{fake("a", check.Warn), fake("b", check.Fail)}, nil, 1},
		{[]check.Check{fake("a", check.Error)}, nil, 1},
		{[]check.Check{fake("a", check.Fail)}, []string{"--exit-zero"}, 0},
		{[]check.Check{fake("a", check.Warn)}, []string{"--exit-zero"}, 0},
		{[]check.Check{fake("a", check.Fail), fake("b", check.Pass)}, []string{"--only", "b"}, 0},
		{[]check.Check{fake("a", check.Fail), fake("b", check.Pass)}, []string{"--skip", "a"}, 0},
	} {
		code, out, errs := invoke(t, tc.checks, tc.extra...)
		if code != tc.want {
			t.Errorf("%v %v: exit %d, want %d\n%s%s", tc.checks, tc.extra, code, tc.want, out, errs)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	all := []check.Check{fake("a", check.Pass)}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "flag provided but not defined"},
		{[]string{"--format", "yaml"}, `--format "yaml"`},
		{[]string{"--only", "nope"}, `--only: unknown check ID "nope"`},
		{[]string{"--skip", "a,nope"}, `--skip: unknown check ID "nope"`},
		{[]string{"--timeout", "-1s"}, "must not be negative"},
		{[]string{"extra"}, `unexpected argument "extra"`},
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
	all := []check.Check{fake("a", check.Pass)}
	var out, errb bytes.Buffer
	bad := writeConfig(t, "timeout: 5s\nchecks:\n  a:\n    enabeld: true\n")
	code := run([]string{"--root", t.TempDir(), "--config", bad}, &out, &errb, all)
	if code != report.ExitUsage || !strings.Contains(errb.String(), bad+":4: field enabeld not found") {
		t.Errorf("typo in config: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	unknown := writeConfig(t, "checks:\n  nope: {enabled: false}\n")
	code = run([]string{"--root", t.TempDir(), "--config", unknown}, &out, &errb, all)
	if code != report.ExitUsage || !strings.Contains(errb.String(), "checks.nope: unknown check ID") {
		t.Errorf("unknown check in config: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	code = run([]string{"--root", t.TempDir(), "--config", filepath.Join(t.TempDir(), "missing.yaml")}, &out, &errb, all)
	if code != report.ExitUsage {
		t.Errorf("missing explicit config: exit %d", code)
	}
}

func TestConfigDisablesCheck(t *testing.T) {
	all := []check.Check{fake("a", check.Fail), fake("b", check.Pass)}
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
	all := []check.Check{fake("alpha", check.Pass), fake("beta", check.Pass)}
	var out, errb bytes.Buffer
	if code := run([]string{"--help"}, &out, &errb, all); code != 0 || !strings.Contains(out.String(), "Exit codes:") {
		t.Errorf("--help: exit %d, %q", code, out.String())
	}
	for i, l := range strings.Split(usageText, "\n") {
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
	all := []check.Check{fake("a", check.Warn)}
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
	code, _, errs := invoke(t, all, "--output", filepath.Join(dir, "no/such/dir/r.json"))
	if code != 1 || !strings.Contains(errs, "--output") {
		t.Errorf("unwritable output: exit %d, %q", code, errs)
	}
}

func TestRunTimeoutNeverHangs(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	stuck := check.Check{ID: "stuck", Title: "Stuck", Description: "never returns",
		Run: func(context.Context, *check.Env) []check.Finding { <-block; return nil }}
	done := make(chan int, 1)
	go func() {
		code, _, _ := invoke(t, []check.Check{stuck, fake("b", check.Pass)}, "--timeout", "200ms", "--format", "json")
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
	code, _, errs := invoke(t, []check.Check{fake("a", check.Pass)}, "--wait", "1h")
	if code != 0 || !strings.Contains(errs, "--wait ignored: needs the running system") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestFreezeTestNeedsTheCheck(t *testing.T) {
	code, _, errs := invoke(t, []check.Check{fake("a", check.Pass)}, "--freeze-test", "/data")
	if code != report.ExitUsage || !strings.Contains(errs, "--freeze-test needs the fs-freeze check") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestSummaryAndSeveralOutputs(t *testing.T) {
	all := []check.Check{fake("a", check.Warn), fake("b", check.Pass)}
	dir := t.TempDir()
	js, txt := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.txt")
	code, out, errs := invoke(t, all, "--summary", "--output", "json:"+js, "--output", "text:"+txt)
	if code != 2 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "guestcheck: WARN 0 fail, 0 error, 1 warn, 1 pass, 0 skip (2 checks, "
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
