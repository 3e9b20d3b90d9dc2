package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// WriteJUnit renders r as a JUnit XML document: one <testsuite> per check,
// one <testcase> per finding. A fail finding is a <failure type="fail">, a
// warn finding a <failure type="warn"> (it needs attention: the exit code
// is not 0 either), an error finding an <error> (the check could not
// judge), a skip finding <skipped>, a pass finding a test case without
// children. A waived finding is <skipped> whatever its status, with a
// message that says so, its status, the reason and the finding. The
// failure's text holds the message, the evidence and the fix. Test case
// names are "code: message", so that a CI page says what was found;
// findings have no duration of their own, so test cases have time 0 and
// each suite the check's duration. The document's shape is
// internal/shared/junitxml's, which fleet and prove write too.
func WriteJUnit(w io.Writer, r Report) error {
	var doc junitxml.Suites
	for i, c := range r.Checks {
		s := junitxml.Suite{
			Name: c.ID, Package: r.Tool, ID: i,
			Timestamp: junitxml.Timestamp(r.StartedAt),
			Hostname:  junitxml.Hostname(r.Host.Hostname),
			Time:      junitxml.Seconds(c.DurationMS),
			Props: []junitxml.Property{
				{Name: "title", Value: c.Title}, {Name: "status", Value: string(c.Status)}, {Name: "summary", Value: c.Summary},
				{Name: "tool", Value: r.Tool}, {Name: "version", Value: r.Version}, {Name: "root", Value: r.Root}, {Name: "boot_id", Value: r.Host.BootID},
			},
		}
		findings := c.Findings
		if len(findings) == 0 {
			// Not produced by the runner, which turns a check without
			// findings into an error; a hand-built report still shows the
			// check's verdict.
			findings = []runner.Finding{{Status: c.Status, Code: c.ID, Message: c.Summary}}
		}
		for _, f := range findings {
			s.Add(junitCase(r.Tool+"."+c.ID, f))
		}
		doc.Suites = append(doc.Suites, s)
	}
	return junitxml.Write(w, doc)
}

// junitCase is one finding as a test case of the check's suite.
func junitCase(class string, f runner.Finding) junitxml.Case {
	tc := junitxml.Case{Name: f.Code + ": " + f.Message, Classname: class, Time: "0"}
	switch st := valid(f.Status); {
	case f.Waived != nil && st != runner.Pass:
		// Accepted by the operator: CI must not go red on it, and
		// the page still shows what and why.
		tc.Skipped = &junitxml.Skipped{Message: fmt.Sprintf("waived %s: %s (%s)", st, waivedText(f.Waived), f.Message)}
	case st == runner.Fail || st == runner.Warn:
		tc.Failure = &junitxml.Problem{Type: string(st), Message: f.Message, Body: junitBody(f)}
	case st == runner.Error:
		tc.Error = &junitxml.Problem{Type: string(st), Message: f.Message, Body: junitBody(f)}
	case st == runner.Skip:
		tc.Skipped = &junitxml.Skipped{Message: f.Message}
	}
	return tc
}

// junitBody is a failure's text: the status and message, the evidence one
// key a line, and the fix.
func junitBody(f runner.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s\n", strings.ToUpper(string(f.Status)), f.Code, f.Message)
	for _, k := range slices.Sorted(maps.Keys(f.Detail)) {
		v := strings.ReplaceAll(strings.TrimRight(f.Detail[k], "\n"), "\n", "\n  ")
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	if f.Remediation != "" {
		fmt.Fprintf(&b, "fix: %s\n", f.Remediation)
	}
	return junitxml.Body(b.String())
}
