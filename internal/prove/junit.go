package prove

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// The JUnit document, valid under both schemas in schema/junit (the
// stricter side of each, as guestcheck's own JUnit: no attributes on
// <testsuites>, package, id, hostname and a zone-less timestamp on every
// suite, properties, system-out and system-err present, at most one child
// per test case).
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
	Failure   *junitFailure `xml:"failure"`
	Skipped   *junitSkipped `xml:"skipped"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Body    string `xml:",innerxml"` // escaped by escapeBody, newlines kept
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit renders the report for a CI page: a suite "clones" with one
// test case per clone (it booted and guestcheck passed it), and a suite
// "identity" with one test case per identity item (no two clones, and no
// clone and the template, share it). A failure's text holds the message,
// the fix and, for a clone, the console tail; an item that was not
// compared is skipped.
func WriteJUnit(w io.Writer, r Report) error {
	ts := r.StartedAt.UTC().Format("2006-01-02T15:04:05")
	props := []junitProperty{{"image", r.Image.File}, {"accel", r.Accel}, {"firmware", r.Firmware}, {"version", r.Version}}
	clones := junitSuite{Name: "clones", Package: "sealprep.prove", ID: 0, Timestamp: ts, Hostname: "localhost", Props: props,
		Time: millis3(r.DurationMS)}
	for _, c := range r.Clones {
		tc := junitCase{Name: c.Name + ": boots healthy", Classname: "sealprep.prove.clones", Time: millis3(c.Timings.total())}
		if why := cloneFailed(c); why != "" {
			body := why + "\nfix: " + cloneFix(c) + "\n"
			if len(c.ConsoleTail) > 0 {
				body += "console tail:\n  " + strings.Join(c.ConsoleTail, "\n  ") + "\n"
			}
			tc.Failure = &junitFailure{Type: "fail", Message: why, Body: escapeBody(body)}
			clones.Failures++
		}
		clones.Tests++
		clones.Cases = append(clones.Cases, tc)
	}
	ident := junitSuite{Name: "identity", Package: "sealprep.prove", ID: 1, Timestamp: ts, Hostname: "localhost", Props: props, Time: "0.000"}
	for _, it := range r.Items {
		tc := junitCase{Name: string(it.Item) + ": not shared", Classname: "sealprep.prove.identity", Time: "0"}
		switch it.Status {
		case ItemShared:
			var body strings.Builder
			for _, f := range r.Failures {
				if f.Item == string(it.Item) {
					fmt.Fprintf(&body, "%s\nfix: %s\n", f.Message, f.Fix)
				}
			}
			tc.Failure = &junitFailure{Type: "fail", Message: string(it.Item) + " " + it.Detail, Body: escapeBody(body.String())}
			ident.Failures++
		case ItemNotCompared:
			tc.Skipped = &junitSkipped{Message: it.Detail}
			ident.Skipped++
		}
		ident.Tests++
		ident.Cases = append(ident.Cases, tc)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header)
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{clones, ident}}); err != nil {
		return err
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

func (t Timings) total() int64 { return t.Seed + t.Boot + t.CloudInit + t.Guestcheck + t.Collection }

func millis3(ms int64) string {
	ms = max(0, ms)
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// escapeBody escapes a failure's text for innerxml, keeping newlines (CI
// pages show "&#xA;" as one long line) and replacing what XML 1.0 cannot
// carry.
func escapeBody(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\r':
			b.WriteString("&#xD;")
		case r == '\t' || r == '\n' || r >= 0x20 && r != 0xFFFE && r != 0xFFFF:
			b.WriteRune(r)
		default:
			b.WriteRune('\uFFFD')
		}
	}
	return b.String()
}
