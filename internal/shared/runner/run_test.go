package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/store"
)

func fixed(fs ...Finding) func(context.Context, *Env) []Finding {
	return func(context.Context, *Env) []Finding { return fs }
}

func opts(d time.Duration) RunOptions {
	return RunOptions{Timeout: func(string) time.Duration { return d }}
}

func TestRunStatusAndOrder(t *testing.T) {
	t.Parallel()
	checks := []Check{
		{ID: "a", Run: fixed(Passf("ok", "fine", nil))},
		{ID: "b", Run: fixed(Passf("ok", "fine", nil), New(Warn, "meh", "not great", nil, "fix it"))},
		{ID: "c", Run: fixed(Passf("ok", "fine", nil), Skipf("na", "not applicable", nil))},
	}
	rs := Run(context.Background(), checks, &Env{}, opts(time.Second))
	want := []struct {
		id  string
		st  Status
		sum string
	}{{"a", Pass, "fine"}, {"b", Warn, "not great"}, {"c", Pass, "fine"}}
	for i, w := range want {
		if rs[i].ID != w.id || rs[i].Status != w.st || rs[i].Summary != w.sum {
			t.Errorf("result %d = %s/%s/%q, want %s/%s/%q", i, rs[i].ID, rs[i].Status, rs[i].Summary, w.id, w.st, w.sum)
		}
	}
}

func TestRunDependsOn(t *testing.T) {
	t.Parallel()
	checks := []Check{
		{ID: "dep-ok", Run: fixed(Passf("ok", "fine", nil))},
		{ID: "dep-bad", Run: fixed(New(Fail, "bad", "broken", nil, "fix"))},
		{ID: "x", DependsOn: []string{"dep-ok"}, Run: fixed(Passf("ok", "ran", nil))},
		{ID: "y", DependsOn: []string{"dep-ok", "dep-bad"}, Run: fixed(Passf("ok", "ran", nil))},
		{ID: "z", DependsOn: []string{"not-in-run"}, Run: fixed(Passf("ok", "ran", nil))},
	}
	rs := Run(context.Background(), checks, &Env{}, opts(time.Second))
	if rs[2].Status != Pass {
		t.Errorf("x = %s, want pass", rs[2].Status)
	}
	if rs[3].Status != Skip || !strings.Contains(rs[3].Summary, "dep-bad reported fail") {
		t.Errorf("y = %s %q, want skip naming dep-bad", rs[3].Status, rs[3].Summary)
	}
	if rs[4].Status != Pass {
		t.Errorf("z = %s, want pass (dependency not in the run is not enforced)", rs[4].Status)
	}
}

func TestRunPanicBecomesError(t *testing.T) {
	t.Parallel()
	checks := []Check{
		{ID: "boom", Run: func(context.Context, *Env) []Finding { panic("kaboom") }},
		{ID: "fine", Run: fixed(Passf("ok", "fine", nil))},
	}
	rs := Run(context.Background(), checks, &Env{}, opts(time.Second))
	if rs[0].Status != Error || rs[0].Findings[0].Code != "check-panic" || !strings.Contains(rs[0].Summary, "kaboom") {
		t.Errorf("panicking check = %+v", rs[0])
	}
	if rs[1].Status != Pass {
		t.Errorf("other check = %s, want pass", rs[1].Status)
	}
}

func TestRunCheckDeadline(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	defer close(block)
	checks := []Check{
		// Ignores its context entirely: the runner must still move on.
		{ID: "stuck", Run: func(context.Context, *Env) []Finding { <-block; return nil }},
		{ID: "fine", Run: fixed(Passf("ok", "fine", nil))},
	}
	rs := Run(context.Background(), checks, &Env{}, opts(50*time.Millisecond))
	if rs[0].Status != Error || rs[0].Findings[0].Code != "check-timeout" {
		t.Errorf("stuck check = %s %+v, want error check-timeout", rs[0].Status, rs[0].Findings)
	}
	if rs[1].Status != Pass {
		t.Errorf("other check = %s, want pass", rs[1].Status)
	}
}

func TestRunWholeDeadline(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	checks := []Check{
		{ID: "stuck", Run: func(context.Context, *Env) []Finding { <-block; return nil }},
		{ID: "waits", DependsOn: []string{"stuck"}, Run: fixed(Passf("ok", "ran", nil))},
	}
	rs := Run(ctx, checks, &Env{}, opts(time.Hour))
	for _, r := range rs {
		if r.Status != Error {
			t.Errorf("%s = %s, want error after the run deadline", r.ID, r.Status)
		}
	}
}

func TestRunChecksAreConcurrent(t *testing.T) {
	t.Parallel()
	// Each check waits until both have started: this deadlocks (and the
	// per-check deadline turns it into errors) unless they run at once.
	var wg sync.WaitGroup
	wg.Add(2)
	both := func(ctx context.Context, _ *Env) []Finding {
		wg.Done()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return []Finding{Passf("ok", "met", nil)}
		case <-ctx.Done():
			return []Finding{Errorf("alone", "the other check never started", nil, "")}
		}
	}
	rs := Run(context.Background(), []Check{{ID: "a", Run: both}, {ID: "b", Run: both}}, &Env{}, opts(5*time.Second))
	for _, r := range rs {
		if r.Status != Pass {
			t.Errorf("%s = %s %q, want pass", r.ID, r.Status, r.Summary)
		}
	}
}

func TestRunBadFindings(t *testing.T) {
	t.Parallel()
	checks := []Check{
		{ID: "none", Run: fixed()},
		{ID: "zero", Run: fixed(Finding{Code: "x", Message: "forgot the status"})},
	}
	rs := Run(context.Background(), checks, &Env{}, opts(time.Second))
	if rs[0].Status != Error || rs[0].Findings[0].Code != "no-findings" {
		t.Errorf("no findings = %+v, want error", rs[0])
	}
	if rs[1].Status != Error {
		t.Errorf("zero-status finding = %s, want error", rs[1].Status)
	}
}

// TestRunMessagesOneLine: whatever a check writes, the runner hands on
// one-line messages, remediations and summaries, leaves detail values (the
// evidence) as they are, and does not change the check's own findings.
func TestRunMessagesOneLine(t *testing.T) {
	t.Parallel()
	own := []Finding{
		New(Fail, "bad", "read /etc/x:\n  line 3: bad\r\n", map[string]string{"lines": "a\nb"}, "edit /etc/x\n\tthen reboot"),
		New(Fail, "worse", "second\tone", nil, "fix"),
	}
	checks := []Check{
		{ID: "multi", Run: fixed(own...)},
		{ID: "boom", Run: func(context.Context, *Env) []Finding { panic("two\nlines") }},
	}
	rs := Run(context.Background(), checks, &Env{}, opts(time.Second))
	f := rs[0].Findings[0]
	if f.Message != "read /etc/x: line 3: bad" || f.Remediation != "edit /etc/x then reboot" {
		t.Errorf("finding not folded: %q / %q", f.Message, f.Remediation)
	}
	if rs[0].Findings[1].Message != "second one" {
		t.Errorf("second finding: %q", rs[0].Findings[1].Message)
	}
	if rs[0].Summary != "read /etc/x: line 3: bad (+1 more)" {
		t.Errorf("summary %q", rs[0].Summary)
	}
	if f.Detail["lines"] != "a\nb" {
		t.Errorf("detail changed: %q", f.Detail["lines"])
	}
	if own[0].Message != "read /etc/x:\n  line 3: bad\r\n" {
		t.Errorf("the check's own finding changed: %q", own[0].Message)
	}
	for _, r := range rs {
		for _, s := range append([]string{r.Summary}, r.Findings[0].Message, r.Findings[0].Remediation) {
			if strings.ContainsAny(s, "\r\n") {
				t.Errorf("%s: %q is not one line", r.ID, s)
			}
		}
	}
}

func TestIsKebab(t *testing.T) {
	t.Parallel()
	if !IsKebab("cloud-init-module-error") || IsKebab("Cloud_init") || IsKebab("-x") {
		t.Error("IsKebab")
	}
}

// TestRunStore: the checks of one run share one fact store; a second run
// gets another; the caller's Env is left without one.
func TestRunStore(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[*store.Store]int{}
	use := func(_ context.Context, env *Env) []Finding {
		mu.Lock()
		defer mu.Unlock()
		if env.Facts == nil {
			return []Finding{New(Fail, "no-store", "no store", nil, "fix")}
		}
		seen[env.Facts]++
		return []Finding{Passf("ok", "store", nil)}
	}
	checks := []Check{{ID: "a", Run: use}, {ID: "b", Run: use}, {ID: "c", DependsOn: []string{"a"}, Run: use}}
	env := &Env{}
	for run := 1; run <= 2; run++ {
		for _, r := range Run(context.Background(), checks, env, opts(time.Second)) {
			if r.Status != Pass {
				t.Errorf("run %d: %s = %s %q", run, r.ID, r.Status, r.Summary)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("two runs used %d stores, want 2", len(seen))
	}
	for s, n := range seen {
		if n != 3 {
			t.Errorf("store %p served %d checks, want the run's 3", s, n)
		}
	}
	if env.Facts != nil {
		t.Error("Run stored its facts in the caller's Env")
	}
}
