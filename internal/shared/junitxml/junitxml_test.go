package junitxml

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

func TestBody(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"]]>", "]]&gt;"},
		{`"quoted" 'too'`, `"quoted" 'too'`},
		{"line 1\nline 2\n", "line 1\nline 2\n"},
		{"crlf\r\n", "crlf&#xD;\n"},
		{"tab\there", "tab\there"},
		{"nul\x00 esc\x1b[31m del\x7f", "nul\uFFFD esc\uFFFD[31m del\x7f"},
		{"bad \xff\xfe utf-8", "bad \uFFFD utf-8"},
		{"noncharacters \uFFFE\uFFFF", "noncharacters \uFFFD\uFFFD"},
		{"ünïcode ✓ 😀", "ünïcode ✓ 😀"},
		{"", ""},
	} {
		if got := Body(tc.in); got != tc.want {
			t.Errorf("Body(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSeconds(t *testing.T) {
	for ms, want := range map[int64]string{0: "0.000", 7: "0.007", 42: "0.042", 999: "0.999", 1000: "1.000",
		1234: "1.234", 61005: "61.005", -5: "0.000"} {
		if got := Seconds(ms); got != want {
			t.Errorf("Seconds(%d) = %q, want %q", ms, got, want)
		}
	}
}

func TestTimestamp(t *testing.T) {
	at := time.Date(2026, 12, 2, 6, 30, 15, 999, time.FixedZone("CET", 3600))
	if got := Timestamp(at); got != "2026-12-02T05:30:15" {
		t.Errorf("Timestamp = %q, want the time in UTC without zone", got)
	}
}

func TestHostname(t *testing.T) {
	for in, want := range map[string]string{"": "localhost", " \t\r\n": "localhost", "hv1": "hv1", " hv1 ": " hv1 "} {
		if got := Hostname(in); got != want {
			t.Errorf("Hostname(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAdd: the counts always match the cases.
func TestAdd(t *testing.T) {
	var s Suite
	p := &Problem{Type: "fail"}
	for _, c := range []Case{{Name: "pass"}, {Failure: p}, {Failure: p}, {Error: p}, {Skipped: &Skipped{}}, {Name: "pass"}} {
		s.Add(c)
	}
	if s.Tests != 6 || s.Failures != 2 || s.Errors != 1 || s.Skipped != 1 || len(s.Cases) != 6 || s.Cases[3].Error != p {
		t.Errorf("tests %d failures %d errors %d skipped %d cases %d", s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases))
	}
}

// hostile is text a guest could put anywhere: markup, both quotes, a
// CDATA end, CR LF, tab, control characters, invalid UTF-8 and a
// noncharacter.
const hostile = "a <b> & \"c\" 'd' ]]> e\r\nf\tg\x00h\x1bi\xffj\uFFFFk ✓"

// sample is a document with every kind of test case and hostile text in
// every field that carries text.
func sample() Suites {
	s := Suite{Name: hostile, Package: "pkg." + hostile, ID: 0, Timestamp: Timestamp(time.Unix(1700000000, 0)),
		Hostname: Hostname(hostile), Time: Seconds(1234), Props: []Property{{Name: "p", Value: hostile}}}
	s.Add(Case{Name: "pass " + hostile, Classname: "c." + hostile, Time: "0"})
	s.Add(Case{Name: "fail", Classname: "c", Time: Seconds(5), Failure: &Problem{Type: "fail", Message: hostile, Body: Body(hostile + "\nfix: " + hostile)}})
	s.Add(Case{Name: "error", Classname: "c", Time: "0", Error: &Problem{Type: "error", Message: hostile, Body: Body(hostile)}})
	s.Add(Case{Name: "skip", Classname: "c", Time: "0", Skipped: &Skipped{Message: hostile}})
	empty := Suite{Name: "empty", Package: "pkg", ID: 1, Timestamp: Timestamp(time.Unix(0, 0)), Hostname: Hostname(""), Time: Seconds(0)}
	return Suites{Suites: []Suite{s, empty}}
}

// TestWrite pins the write sequence (declaration, two-space indent, final
// newline) and that a body keeps its lines.
func TestWrite(t *testing.T) {
	var s Suite
	s.Add(Case{Name: "n", Classname: "c", Time: "0", Failure: &Problem{Type: "fail", Message: "m", Body: Body("one\ntwo <3\n")}})
	s.Name, s.Package, s.Timestamp, s.Hostname, s.Time = "s", "p", "2026-12-02T04:00:00", "h", "0.001"
	var b bytes.Buffer
	if err := Write(&b, Suites{Suites: []Suite{s}}); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="s" package="p" id="0" timestamp="2026-12-02T04:00:00" hostname="h" tests="1" failures="1" errors="0" skipped="0" time="0.001">
    <properties></properties>
    <testcase name="n" classname="c" time="0">
      <failure type="fail" message="m">one
two &lt;3
</failure>
    </testcase>
    <system-out></system-out>
    <system-err></system-err>
  </testsuite>
</testsuites>
`
	if b.String() != want {
		t.Errorf("Write:\n%s", testenv.LineDiff(want, b.String()))
	}
}

// TestSchemas validates a document with every kind of test case and
// hostile text in every field against both schemas in schema/junit, after
// proving each rejects a document it must.
func TestSchemas(t *testing.T) {
	xmllint := testenv.Tool(t, "xmllint", "libxml2-utils")
	dir := t.TempDir()
	good := filepath.Join(dir, "good.xml")
	var b bytes.Buffer
	if err := Write(&b, sample()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, good, b.Bytes())
	// Two children in one test case: the Ant schema's choice forbids it.
	bad := sample()
	bad.Suites[0].Cases[1].Skipped = &Skipped{}
	b.Reset()
	if err := Write(&b, bad); err != nil {
		t.Fatal(err)
	}
	twoChildren := filepath.Join(dir, "two-children.xml")
	writeFile(t, twoChildren, b.Bytes())
	for _, xsd := range []string{"JUnit.xsd", "junit-10.xsd"} {
		xsd = filepath.Join("..", "..", "..", "schema", "junit", xsd)
		if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, good).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", filepath.Base(xsd), err, out)
		}
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("..", "..", "..", "schema", "junit", "JUnit.xsd"), twoChildren).CombinedOutput(); err == nil {
		t.Errorf("JUnit.xsd accepted a test case with a failure and a skip:\n%s", out)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// xmlChars keeps what XML 1.0's Char production allows and drops the
// rest, invalid UTF-8 included, and U+FFFD, which is what the escapers
// put where they dropped something. It is written from the production,
// not from Body, so that the two can disagree.
func xmlChars(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError, r == 0xFFFD:
		case r == 0x9 || r == 0xA || r == 0xD,
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// validXML reports whether s is text XML 1.0 can carry as it is.
func validXML(s string) bool {
	return utf8.ValidString(s) && xmlChars(strings.ReplaceAll(s, "\uFFFD", "")) == strings.ReplaceAll(s, "\uFFFD", "")
}

// chardata reads escaped text back as a parser sees it.
func chardata(t *testing.T, escaped string) string {
	t.Helper()
	var v struct {
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte("<x>"+escaped+"</x>"), &v); err != nil {
		t.Fatalf("%q does not parse: %v", escaped, err)
	}
	return v.Text
}

func TestOracle(t *testing.T) {
	// The helpers the fuzz target judges by must themselves tell valid
	// from invalid text.
	for s, want := range map[string]bool{"ok\r\n\t✓": true, "\uFFFD": true, "\x00": false, "\xff": false, "\uFFFE": false, "\x1b": false} {
		if validXML(s) != want {
			t.Errorf("validXML(%q) = %v", s, !want)
		}
	}
	if got := xmlChars("a\x00b\xffc\uFFFDd\r"); got != "abcd\r" {
		t.Errorf("xmlChars = %q", got)
	}
}

// FuzzBody: whatever the text, Body's output parses as XML; text XML can
// carry comes back exactly, and from any other only what XML cannot carry
// is lost. The same holds for every attribute of a document Write wrote.
func FuzzBody(f *testing.F) {
	for _, s := range []string{"", "plain", hostile, "\r", "\r\n", "]]>", "&amp;", "\xed\xa0\x80", "\U0010FFFF", "<![CDATA[x]]>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := chardata(t, Body(s))
		if validXML(s) && got != s {
			t.Errorf("Body(%q) reads back as %q", s, got)
		}
		if !validXML(got) || strings.ReplaceAll(got, "\uFFFD", "") != xmlChars(s) {
			t.Errorf("Body(%q) reads back as %q, want %q with U+FFFD for what XML cannot carry", s, got, xmlChars(s))
		}

		doc := Suites{Suites: []Suite{{Name: s, Package: s, Hostname: s, Timestamp: s, Time: s, Props: []Property{{Name: s, Value: s}}}}}
		doc.Suites[0].Add(Case{Name: s, Classname: s, Time: s, Failure: &Problem{Type: s, Message: s, Body: Body(s)}})
		var b bytes.Buffer
		if err := Write(&b, doc); err != nil {
			t.Fatal(err)
		}
		var back Suites
		if err := xml.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if len(back.Suites) != 1 || len(back.Suites[0].Cases) != 1 || back.Suites[0].Cases[0].Failure == nil || len(back.Suites[0].Props) != 1 {
			t.Fatalf("read back %+v", back)
		}
		bs, c := back.Suites[0], back.Suites[0].Cases[0]
		for field, v := range map[string]string{"suite name": bs.Name, "package": bs.Package, "hostname": bs.Hostname,
			"timestamp": bs.Timestamp, "property name": bs.Props[0].Name, "property value": bs.Props[0].Value,
			"case name": c.Name, "classname": c.Classname, "message": c.Failure.Message, "body": chardata(t, c.Failure.Body)} {
			if validXML(s) && v != s || !validXML(v) || strings.ReplaceAll(v, "\uFFFD", "") != xmlChars(s) {
				t.Errorf("%s %q reads back as %q", field, s, v)
			}
		}
	})
}
