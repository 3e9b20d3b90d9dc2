// Package junitxml is the one JUnit XML document shape that guestcheck's
// report (--format junit), sealprep prove and guestcheck fleet write, so
// that the three cannot drift apart in what a CI page can read.
//
// The shape is valid under both schemas stored in schema/junit: windyroad's
// schema of Ant's output (JUnit.xsd) and Jenkins' junit-10.xsd. Where they
// disagree it takes the stricter side of each: <testsuites> without
// attributes, package, id, hostname and a zone-less timestamp on every
// suite, <properties>, <system-out> and <system-err> in every suite, and
// at most one child per test case.
//
// It imports nothing of the project: cmd/sealprep links it through
// internal/host/prove and must not link internal/shared/runner (test/arch).
package junitxml

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Suites is the document: one <testsuites> without attributes, which the
// Ant schema declares none of.
type Suites struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []Suite  `xml:"testsuite"`
}

// Suite is one <testsuite>. Package, ID, Hostname and Timestamp are
// required by the Ant schema; Properties, SystemOut and SystemErr are
// written even when empty because it requires the elements. Tests,
// Failures, Errors and Skipped are the counts Add keeps.
type Suite struct {
	Name      string     `xml:"name,attr"`
	Package   string     `xml:"package,attr"`
	ID        int        `xml:"id,attr"` // the suite's index in the document, from 0
	Timestamp string     `xml:"timestamp,attr"`
	Hostname  string     `xml:"hostname,attr"`
	Tests     int        `xml:"tests,attr"`
	Failures  int        `xml:"failures,attr"`
	Errors    int        `xml:"errors,attr"`
	Skipped   int        `xml:"skipped,attr"`
	Time      string     `xml:"time,attr"`
	Props     []Property `xml:"properties>property"`
	Cases     []Case     `xml:"testcase"`
	SystemOut string     `xml:"system-out"`
	SystemErr string     `xml:"system-err"`
}

// Property is one <property> of a suite.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one <testcase>. At most one of Failure, Error and Skipped may be
// set (the Ant schema's choice); none is a pass.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Problem `xml:"failure"`
	Error     *Problem `xml:"error"`
	Skipped   *Skipped `xml:"skipped"`
}

// Problem is a <failure> (what was tested is wrong) or an <error> (it
// could not be tested); both schemas give the two the same shape.
type Problem struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	// Body is written as it is: build it with Body. encoding/xml would
	// write every newline of a character-data field as "&#xA;", which CI
	// pages then show as one long line.
	Body string `xml:",innerxml"`
}

// Skipped is a <skipped> test case and why.
type Skipped struct {
	Message string `xml:"message,attr"`
}

// Add appends c to the suite and counts it: every case in Tests, and a
// failure, an error or a skip in its own count, so that the counts the
// schemas require always match the cases.
func (s *Suite) Add(c Case) {
	switch {
	case c.Failure != nil:
		s.Failures++
	case c.Error != nil:
		s.Errors++
	case c.Skipped != nil:
		s.Skipped++
	}
	s.Tests++
	s.Cases = append(s.Cases, c)
}

// Seconds is a duration given in milliseconds as seconds with three
// decimals ("0.042"), an xs:decimal both schemas accept; a negative
// duration, which no clock should give, is 0.000.
func Seconds(ms int64) string {
	ms = max(0, ms)
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// Timestamp is t in UTC without a zone, the only form the Ant schema's
// pattern allows.
func Timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05")
}

// Hostname is the suite's host name: the Ant schema requires a token that
// is not empty once XML white space is collapsed, and asks for "localhost"
// when the name is not known.
func Hostname(name string) string {
	if strings.Trim(name, " \t\n\r") == "" {
		return "localhost"
	}
	return name
}

// Body escapes s for a Problem's Body, which is written as it is: markup
// characters become references, newlines stay newlines, a carriage return
// becomes "&#xD;" (a raw one would be read back as a newline), and what
// XML 1.0 cannot carry at all (invalid UTF-8, the other control
// characters, U+FFFE and U+FFFF) becomes U+FFFD. Attributes and other
// fields need no such step: encoding/xml escapes them the same way.
func Body(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;") // "]]>" may not stand in text
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

// Write writes doc with an XML declaration, indented two spaces a level,
// and a final newline.
func Write(w io.Writer, doc Suites) error {
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
