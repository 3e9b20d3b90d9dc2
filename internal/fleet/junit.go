package fleet

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/report"
)

// The JUnit document takes the stricter side of the two schemas in
// schema/junit/, as guestcheck's own JUnit report does (internal/report).
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
	Body    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes one <testsuite> per VM: one test case per check of
// its report (fail and warn a <failure>, error an <error>, skip
// <skipped>), one <failure> per identity item it shares with another VM,
// and for a VM that could not be surveyed one <error> with the reason.
func WriteJUnit(w io.Writer, r Result) error {
	doc := junitSuites{Suites: make([]junitSuite, 0, len(r.VMs))}
	host := r.Host
	if host == "" {
		host = "localhost"
	}
	for i, vm := range r.VMs {
		s := junitSuite{Name: xmlText(vm.Name), Package: "guestcheck.fleet", ID: i,
			Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"), Hostname: xmlText(host),
			Time: fmt.Sprintf("%.3f", float64(vm.DurationMS)/1000),
			Props: []junitProperty{{"source", vm.Source}, {"status", string(vm.Status)},
				{"agent_version", xmlText(vm.AgentVersion)}}}
		class := "fleet." + xmlText(vm.Name)
		if vm.Report == nil {
			s.Cases = append(s.Cases, junitCase{Name: "survey", Classname: class, Time: s.Time,
				Error: &junitProblem{Type: string(Unknown), Message: vm.Reason, Body: vm.Reason}})
			s.Errors++
		} else {
			for _, c := range vm.Report.Checks {
				s.add(checkCase(class, c))
			}
		}
		for _, c := range r.Collisions {
			for _, m := range c.Members {
				if m != vm.Name {
					continue
				}
				msg := fmt.Sprintf("%s %s shared with %s", c.Item, xmlText(c.Value), xmlText(strings.Join(others(c.Members, vm.Name), ", ")))
				s.add(junitCase{Name: "identity: " + msg, Classname: class + ".identity", Time: "0",
					Failure: &junitProblem{Type: string(Fail), Message: msg, Body: msg + "\nfix: " + c.Fix + "\n"}})
			}
		}
		s.Tests = len(s.Cases)
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

// add appends a case and counts its outcome (the Error count is kept
// by the caller for the survey case).
func (s *junitSuite) add(c junitCase) {
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

// checkCase is one check of a guest's report.
func checkCase(class string, c report.Check) junitCase {
	msg := xmlText(c.Summary)
	tc := junitCase{Name: xmlText(c.ID + ": " + c.Summary), Classname: class + "." + xmlText(c.ID),
		Time: fmt.Sprintf("%.3f", float64(max(c.DurationMS, 0))/1000)}
	switch c.Status {
	case check.Pass:
	case check.Skip:
		tc.Skipped = &junitSkipped{Message: msg}
	case check.Fail, check.Warn:
		tc.Failure = &junitProblem{Type: string(c.Status), Message: msg, Body: findingsText(c)}
	default:
		tc.Error = &junitProblem{Type: string(c.Status), Message: msg, Body: findingsText(c)}
	}
	return tc
}

// findingsText lists a check's findings that are not a pass, with fixes.
func findingsText(c report.Check) string {
	var b strings.Builder
	for _, f := range c.Findings {
		if f.Status == check.Pass {
			continue
		}
		fmt.Fprintf(&b, "%s %s: %s\n", strings.ToUpper(string(f.Status)), f.Code, f.Message)
		if f.Remediation != "" {
			fmt.Fprintf(&b, "fix: %s\n", f.Remediation)
		}
	}
	return xmlText(b.String())
}

func others(ms []string, me string) []string {
	var out []string
	for _, m := range ms {
		if m != me {
			out = append(out, m)
		}
	}
	return out
}

// xmlText replaces what XML 1.0 cannot carry (invalid UTF-8, control
// characters but tab and newline) with U+FFFD; a guest's text may hold
// anything.
func xmlText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF {
			return r
		}
		return '\uFFFD'
	}, s)
}
