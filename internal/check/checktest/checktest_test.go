package checktest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/guestcheck/guestcheck/internal/check"
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
	codes := []string{"a-ok", "a-bad"}
	good := []check.Finding{check.Passf("a-ok", "fine", map[string]string{"mount_point": "/"}),
		check.New(check.Fail, "a-bad", "broken", nil, "fix it")}
	if got := failures(t, func(tb testing.TB) { Conventions(tb, good, codes) }); len(got) != 0 {
		t.Errorf("good findings: %v", got)
	}
	for name, fs := range map[string][]check.Finding{
		"none":            nil,
		"undeclared code": {check.Passf("a-other", "fine", nil)},
		"invalid status":  {{Status: "ok", Code: "a-ok", Message: "fine", Remediation: "fix it"}},
		"no remediation":  {check.New(check.Warn, "a-bad", "broken", nil, "")},
		"trailing period": {check.Passf("a-ok", "fine.", nil)},
		"two lines":       {check.Passf("a-ok", "fine\nreally", nil)},
		"empty message":   {check.Passf("a-ok", "", nil)},
		"detail key":      {check.Passf("a-ok", "fine", map[string]string{"mountPoint": "/"})},
	} {
		if got := failures(t, func(tb testing.TB) { Conventions(tb, fs, codes) }); len(got) != 1 {
			t.Errorf("%s: %d failures %v, want 1", name, len(got), got)
		}
	}
}

func TestWant(t *testing.T) {
	t.Parallel()
	fs := []check.Finding{check.Passf("a-ok", "all fine here", nil), check.New(check.Warn, "a-bad", "x", nil, "y"),
		check.New(check.Warn, "a-bad", "z", nil, "y")}
	var got check.Finding
	if f := failures(t, func(tb testing.TB) { got = Want(tb, fs, "a-ok", check.Pass, "fine", "here") }); len(f) != 0 || got.Message != "all fine here" {
		t.Errorf("Want = %+v, failures %v", got, f)
	}
	for name, f := range map[string]func(tb testing.TB){
		"absent":         func(tb testing.TB) { Want(tb, fs, "a-none", check.Pass) },
		"twice":          func(tb testing.TB) { Want(tb, fs, "a-bad", check.Warn) },
		"wrong status":   func(tb testing.TB) { Want(tb, fs, "a-ok", check.Warn) },
		"missing substr": func(tb testing.TB) { Want(tb, fs, "a-ok", check.Pass, "broken") },
	} {
		if got := failures(t, f); len(got) != 1 {
			t.Errorf("%s: %d failures %v, want 1", name, len(got), got)
		}
	}
	if !IsSnake("server_1_status") || IsSnake("server-1") || IsSnake("Server") || IsSnake("") {
		t.Error("IsSnake")
	}
}
