package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/guestcheck/guestcheck/internal/check"
)

// The JUnit document. It is valid under both widely used schemas, which
// disagree on a few points, so it takes the stricter side of each:
// windyroad's Ant schema wants <testsuites> without attributes, package
// and id on every suite, a timestamp without time zone, <properties>,
// <system-out> and <system-err> in every suite, and at most one child per
// test case; Jenkins' junit-10.xsd allows all of that. Both are in
// schema/junit/, where the tests validate against them with xmllint.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string          `xml:"name,attr"`
	Package   string          `xml:"package,attr"`
	ID        int             `xml:"id,attr"`
	Timestamp string          `xml:"timestamp,attr"`
	Hostname  string          `xml:"hostname,attr"`
	Tests     int             `xml:"tests,attr"`
	Failures  int             `xml:"failures,attr"`
	Errors    int             `xml:"errors,attr"`
	Skipped   int             `xml:"skipped,attr"`
	Time      string          `xml:"time,attr"`
	Props     []junitProperty `xml:"properties>property"`
	Cases     []junitCase     `xml:"testcase"`
	SystemOut string          `xml:"system-out"`
	SystemErr string          `xml:"system-err"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure"`
	Error     *junitProblem `xml:"error"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitProblem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	// Body is escaped by junitBody itself: encoding/xml would write
	// every newline as "&#xA;", which CI pages then show as one line.
	Body string `xml:",innerxml"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit renders r as a JUnit XML document: one <testsuite> per check,
// one <testcase> per finding. A fail finding is a <failure type="fail">, a
// warn finding a <failure type="warn"> (it needs attention: the exit code
// is not 0 either), an error finding an <error> (the check could not
// judge), a skip finding <skipped>, a pass finding a test case without
// children. A waived finding is <skipped> whatever its status, with a
// message that says so, its status, the reason and the finding. The failure's text holds the message, the evidence and the
// fix. Test case names are "code: message", so that a CI page says what
// was found; findings have no duration of their own, so test cases have
// time 0 and each suite the check's duration.
func WriteJUnit(w io.Writer, r Report) error {
	doc := junitSuites{Suites: make([]junitSuite, 0, len(r.Checks))}
	host := r.Host.Hostname
	if host == "" {
		host = "localhost" // what the Ant schema asks for when the name is unknown
	}
	for i, c := range r.Checks {
		s := junitSuite{
			Name: c.ID, Package: r.Tool, ID: i,
			// UTC, without zone: the Ant schema's pattern allows none.
			Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"),
			Hostname:  host,
			Time:      millis3(c.DurationMS),
			Props: []junitProperty{
				{"title", c.Title}, {"status", string(c.Status)}, {"summary", c.Summary},
				{"tool", r.Tool}, {"version", r.Version}, {"root", r.Root}, {"boot_id", r.Host.BootID},
			},
		}
		findings := c.Findings
		if len(findings) == 0 {
			// Not produced by the runner, which turns a check without
			// findings into an error; a hand-built report still shows the
			// check's verdict.
			findings = []check.Finding{{Status: c.Status, Code: c.ID, Message: c.Summary}}
		}
		for _, f := range findings {
			tc := junitCase{Name: f.Code + ": " + f.Message, Classname: r.Tool + "." + c.ID, Time: "0"}
			switch st := valid(f.Status); {
			case f.Waived != nil && st != check.Pass:
				// Accepted by the operator: CI must not go red on it, and
				// the page still shows what and why.
				tc.Skipped = &junitSkipped{Message: fmt.Sprintf("waived %s: %s (%s)", st, waivedText(f.Waived), f.Message)}
				s.Skipped++
			case st == check.Fail || st == check.Warn:
				tc.Failure = &junitProblem{Type: string(st), Message: f.Message, Body: junitBody(f)}
				s.Failures++
			case st == check.Error:
				tc.Error = &junitProblem{Type: string(st), Message: f.Message, Body: junitBody(f)}
				s.Errors++
			case st == check.Skip:
				tc.Skipped = &junitSkipped{Message: f.Message}
				s.Skipped++
			}
			s.Tests++
			s.Cases = append(s.Cases, tc)
		}
		doc.Suites = append(doc.Suites, s)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header)
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// junitBody is a failure's text: the status and message, the evidence one
// key a line, and the fix.
func junitBody(f check.Finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s\n", strings.ToUpper(string(f.Status)), f.Code, f.Message)
	keys := make([]string, 0, len(f.Detail))
	for k := range f.Detail {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.ReplaceAll(strings.TrimRight(f.Detail[k], "\n"), "\n", "\n  ")
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	if f.Remediation != "" {
		fmt.Fprintf(&b, "fix: %s\n", f.Remediation)
	}
	var esc strings.Builder
	for _, r := range xmlText(b.String()) {
		switch r {
		case '&':
			esc.WriteString("&amp;")
		case '<':
			esc.WriteString("&lt;")
		case '>':
			esc.WriteString("&gt;")
		case '\r':
			esc.WriteString("&#xD;") // a raw CR would be read back as a newline
		default:
			esc.WriteRune(r)
		}
	}
	return esc.String()
}

// millis3 is a duration in seconds with three decimals, the form both
// schemas accept ("0.042").
func millis3(ms int64) string {
	ms = max(0, ms)
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// xmlText replaces what XML 1.0 cannot carry at all, invalid UTF-8 and the
// control characters other than tab, newline and carriage return, with
// U+FFFD, as encoding/xml does for the attributes it escapes itself.
func xmlText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF {
			return r
		}
		return '\uFFFD'
	}, s)
}
