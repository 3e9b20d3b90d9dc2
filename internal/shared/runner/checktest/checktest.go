// Package checktest holds the assertions that the tests of every area
// package make about a check's findings: the project's conventions, and
// "exactly one finding with this code". It is imported by tests only.
package checktest

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

var snakeKey = regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)

// IsSnake reports whether k is a valid detail key: snake_case, lower-case
// letters and digits.
func IsSnake(k string) bool { return snakeKey.MatchString(k) }

// Conventions holds findings to the rules every check follows: at least
// one finding, each with a valid status and a code from codes (the check's
// declared codes), a one-line message without a trailing period, a
// remediation unless it passes or skips, that remediation one of the
// code's own fixes with its placeholders filled (so that what a report
// says is what the reference says), and snake_case detail keys.
func Conventions(t testing.TB, fs []runner.Finding, codes []runner.Code) {
	t.Helper()
	if len(fs) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range fs {
		if !f.Status.Valid() {
			t.Errorf("%s: invalid status %q", f.Code, f.Status)
		}
		i := slices.IndexFunc(codes, func(c runner.Code) bool { return c.ID == f.Code })
		if i < 0 {
			t.Errorf("undeclared code %q", f.Code)
		} else if f.Remediation != "" && !codes[i].Matches(f.Remediation) {
			t.Errorf("%s: remediation %q is none of the code's fixes %q", f.Code, f.Remediation, codes[i].Fixes())
		}
		if f.Message == "" || strings.HasSuffix(f.Message, ".") || strings.Contains(f.Message, "\n") {
			t.Errorf("%s: message %q must be one line without a trailing period", f.Code, f.Message)
		}
		if f.Status != runner.Pass && f.Status != runner.Skip && f.Remediation == "" {
			t.Errorf("%s: %s without remediation", f.Code, f.Status)
		}
		for k := range f.Detail {
			if !IsSnake(k) {
				t.Errorf("%s: detail key %q is not snake_case", f.Code, k)
			}
		}
	}
}

// Want asserts that fs holds exactly one finding with code, that it has
// status st and that its message contains each of subs; it returns it.
func Want(t testing.TB, fs []runner.Finding, code string, st runner.Status, subs ...string) runner.Finding {
	t.Helper()
	var got []runner.Finding
	for _, f := range fs {
		if f.Code == code {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d findings with code %s, want 1; all:\n%s", len(got), code, Dump(fs))
	}
	f := got[0]
	if f.Status != st {
		t.Errorf("%s: status %s, want %s (%s)", code, f.Status, st, f.Message)
	}
	for _, s := range subs {
		if !strings.Contains(f.Message, s) {
			t.Errorf("%s: message %q lacks %q", code, f.Message, s)
		}
	}
	return f
}

// Dump renders findings one a line, for failure messages.
func Dump(fs []runner.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + string(f.Status) + " " + f.Code + ": " + f.Message + "\n")
	}
	return b.String()
}
