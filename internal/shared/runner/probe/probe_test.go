package probe

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func result(id string, st runner.Status, fs ...runner.Finding) runner.Result {
	return runner.Result{ID: id, Status: st, Summary: id + " says " + string(st), Findings: fs}
}

// TestVerdict holds the probe's rules on results alone: fail, error and an
// invalid status are not ready; a warning only with warnNotReady; a
// pending cloud-init code is not ready whatever its status.
func TestVerdict(t *testing.T) {
	running := runner.New(runner.Warn, "cloud-init-running", "cloud-init is still running", nil, "wait")
	notStarted := runner.Skipf("cloud-init-not-started", "no record of a run", nil)
	running.Pending, notStarted.Pending = true, true // as the runner marks them
	pendingPass := runner.Passf("cloud-init-running", "x", nil)
	pendingPass.Pending = true
	for _, tc := range []struct {
		name    string
		results []runner.Result
		warnNR  bool
		ready   bool
		msg     string
	}{
		{"pass and skip", []runner.Result{result("a", runner.Pass), result("b", runner.Skip)}, false, true, "2 checks (a,b) in 7 ms"},
		{"warn", []runner.Result{result("a", runner.Warn)}, false, true, "1 check (a) in 7 ms"},
		{"warn not ready", []runner.Result{result("a", runner.Warn)}, true, false, "warning: a (a: warn: a says warn)"},
		{"fail and error", []runner.Result{result("a", runner.Fail), result("b", runner.Pass), result("c", runner.Error)}, false, false,
			"failing: a,c (a: fail: a says fail; c: error: c says error)"},
		{"invalid status", []runner.Result{result("a", "bogus")}, false, false, "failing: a (a: bogus: a says bogus)"},
		{"running", []runner.Result{result("c", runner.Warn, running)}, false, false, "warning: c (c: warn: cloud-init is still running)"},
		{"not started", []runner.Result{result("c", runner.Skip, notStarted)}, false, false, "pending: c (c: skip: no record of a run)"},
		{"fail, warn and pending, grouped", []runner.Result{result("a", runner.Warn), result("b", runner.Fail), result("c", runner.Skip, notStarted)}, true, false,
			"failing: b (b: fail: b says fail); warning: a (a: warn: a says warn); pending: c (c: skip: no record of a run)"},
		{"pending passed", []runner.Result{result("c", runner.Pass, pendingPass)}, false, true, "1 check (c) in 7 ms"},
	} {
		ready, msg := Verdict(tc.results, tc.warnNR, 7*time.Millisecond)
		if ready != tc.ready || msg != tc.msg {
			t.Errorf("%s: %v %q, want %v %q", tc.name, ready, msg, tc.ready, tc.msg)
		}
	}
}

func TestSelect(t *testing.T) {
	all := []runner.Check{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	got, err := Select(all, &config.ProbeConfig{Checks: []string{"c", "a"}})
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].ID != "c" {
		t.Errorf("Select = %v, %v; want a, c in the registry's order", got, err)
	}
	if _, err := Select(all, &config.ProbeConfig{Checks: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `unknown check ID "nope"`) {
		t.Errorf("unknown ID: %v", err)
	}
}

func TestLineIsBounded(t *testing.T) {
	for _, s := range []string{"a", strings.Repeat("ü", MaxLine)} {
		if l := Line(s); len(l) > MaxLine || !utf8.ValidString(l) {
			t.Errorf("Line(%d bytes) = %d bytes, valid %v", len(s), len(l), utf8.ValidString(l))
		}
	}
}

// FuzzLine holds Line to its contract for any message: one line of valid
// UTF-8, no control characters, at most MaxLine bytes, and unchanged when
// it already complies.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "guestcheck probe: READY", "a\nb\r\x1b[0m", strings.Repeat("€", 1000), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := Line(s)
		if len(l) > MaxLine || !utf8.ValidString(l) || strings.ContainsAny(l, "\n\r\x1b\x00") {
			t.Fatalf("Line(%q) = %q", s, l)
		}
		clean := utf8.ValidString(s) && len(s) <= MaxLine && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
		if clean && l != s {
			t.Fatalf("Line changed a clean line %q to %q", s, l)
		}
	})
}

// TestTimedOut: a probe cut off by its deadline says so once, names the
// unfinished checks, then what is wrong with the others; with none cut
// off Verdict keeps the word.
func TestTimedOut(t *testing.T) {
	cut := result("h", runner.Error, runner.Errorf("run-timeout", "did not finish before the run's deadline", nil, "raise --timeout"))
	msg, ok := TimedOut([]runner.Result{result("a", runner.Pass), cut, result("b", runner.Fail)}, false, "1ms (--timeout)")
	if want := "timed out after 1ms (--timeout): h did not finish; failing: b (b: fail: b says fail)"; !ok || msg != want {
		t.Errorf("%v %q, want %q", ok, msg, want)
	}
	if _, ok := TimedOut([]runner.Result{result("a", runner.Error)}, false, "1ms (--timeout)"); ok {
		t.Error("an error the check reported is not a timeout")
	}
}
