package checktest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failures []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatal(args ...any) {
	r.failures = append(r.failures, fmt.Sprint(args...))
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// failures runs f against a recorder, in a goroutine so that Fatal can
// stop it as it stops a test.
func failures(t *testing.T, f func(tb testing.TB)) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failures
}

func TestConventions(t *testing.T) {
	t.Parallel()
	bad := runner.Code{ID: "a-bad", Fix: "Fix {path}.", RootFix: "Fix {path} in the image."}
	codes := []runner.Code{{ID: "a-ok"}, bad}
	good := []runner.Finding{runner.Passf("a-ok", "fine", map[string]string{"mount_point": "/"}),
		bad.New(runner.Fail, "broken", nil, bad.Fixf("path", "/etc/fstab")),
		bad.New(runner.Fail, "broken", nil, bad.FixOn(false, "path", "/etc/hosts"))}
	if got := failures(t, func(tb testing.TB) { Conventions(tb, good, codes) }); len(got) != 0 {
		t.Errorf("good findings: %v", got)
	}
	for name, fs := range map[string][]runner.Finding{
		"none":                  nil,
		"undeclared code":       {runner.Passf("a-other", "fine", nil)},
		"invalid status":        {{Status: "ok", Code: "a-bad", Message: "fine", Remediation: "Fix /x."}},
		"no remediation":        {runner.New(runner.Warn, "a-bad", "broken", nil, "")},
		"fix not the code's":    {runner.New(runner.Warn, "a-bad", "broken", nil, "fix it")},
		"fix of a passing code": {runner.New(runner.Warn, "a-ok", "broken", nil, "fix it")},
		"trailing period":       {runner.Passf("a-ok", "fine.", nil)},
		"two lines":             {runner.Passf("a-ok", "fine\nreally", nil)},
		"empty message":         {runner.Passf("a-ok", "", nil)},
		"detail key":            {runner.Passf("a-ok", "fine", map[string]string{"mountPoint": "/"})},
	} {
		if got := failures(t, func(tb testing.TB) { Conventions(tb, fs, codes) }); len(got) != 1 {
			t.Errorf("%s: %d failures %v, want 1", name, len(got), got)
		}
	}
}

func TestWant(t *testing.T) {
	t.Parallel()
	fs := []runner.Finding{runner.Passf("a-ok", "all fine here", nil), runner.New(runner.Warn, "a-bad", "x", nil, "y"),
		runner.New(runner.Warn, "a-bad", "z", nil, "y")}
	var got runner.Finding
	if f := failures(t, func(tb testing.TB) { got = Want(tb, fs, "a-ok", runner.Pass, "fine", "here") }); len(f) != 0 || got.Message != "all fine here" {
		t.Errorf("Want = %+v, failures %v", got, f)
	}
	for name, f := range map[string]func(tb testing.TB){
		"absent":         func(tb testing.TB) { Want(tb, fs, "a-none", runner.Pass) },
		"twice":          func(tb testing.TB) { Want(tb, fs, "a-bad", runner.Warn) },
		"wrong status":   func(tb testing.TB) { Want(tb, fs, "a-ok", runner.Warn) },
		"missing substr": func(tb testing.TB) { Want(tb, fs, "a-ok", runner.Pass, "broken") },
	} {
		if got := failures(t, f); len(got) != 1 {
			t.Errorf("%s: %d failures %v, want 1", name, len(got), got)
		}
	}
	if !IsSnake("server_1_status") || IsSnake("server-1") || IsSnake("Server") || IsSnake("") {
		t.Error("IsSnake")
	}
}
