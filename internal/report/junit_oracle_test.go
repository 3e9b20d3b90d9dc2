package report

import (
	"bytes"
	"encoding/xml"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
)

// oracleJUnit is how WriteJUnit wrote the document before it had its own
// writer: encoding/xml's Encoder with a two-space indent.
func oracleJUnit(doc junitSuites) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(struct {
		XMLName xml.Name     `xml:"testsuites"`
		Suites  []junitSuite `xml:"testsuite"`
	}{Suites: doc.Suites}); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func sameAsEncodingXML(t *testing.T, doc junitSuites) {
	t.Helper()
	want, err := oracleJUnit(doc)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := writeJUnitDoc(&got, doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("writeJUnitDoc differs from encoding/xml:\n%s\nwant\n%s", got.Bytes(), want)
	}
}

func TestJUnitWriterMatchesEncodingXML(t *testing.T) {
	sameAsEncodingXML(t, junitSuites{})
	sameAsEncodingXML(t, junitSuites{Suites: []junitSuite{{}}})
	sameAsEncodingXML(t, junitSuites{Suites: []junitSuite{{Name: "a", SystemOut: "x<\n\"'&\r\t\x00\xff", SystemErr: "\uFFFE",
		Cases: []junitCase{{Name: "n"}, {Skipped: &junitSkipped{Message: "s"}},
			{Failure: &junitProblem{Type: "fail", Message: "m\n", Body: "b&amp;\nc"}, Error: &junitProblem{Type: "error"}}}}}})
}

// FuzzJUnitWriter holds the hand-written writer to encoding/xml on reports
// built from arbitrary strings and statuses.
func FuzzJUnitWriter(f *testing.F) {
	f.Add("fstab", "fstab-x", "msg | # \" ' \\ <&>", "key", "v\nw\r", "fix", "host", "1.0", uint8(4))
	f.Add("a", "b", "\xff\x00\x1b[31m\ufffd\U0010FFFF", "true", "\r\n", "", "", "", uint8(9))
	f.Fuzz(func(t *testing.T, id, code, msg, key, val, fix, host, version string, st uint8) {
		statuses := append(append([]check.Status(nil), check.Statuses...), "", "bogus")
		status := statuses[int(st)%len(statuses)]
		fs := []check.Finding{{Status: status, Code: code, Message: msg, Detail: map[string]string{key: val}, Remediation: fix},
			{Status: check.Pass, Code: code + "-ok", Message: msg}}
		r := New([]check.Result{{ID: id, Title: msg, Status: check.Worst(status, check.Pass), Summary: msg, Findings: fs},
			{ID: "second", Status: check.Skip, Summary: val, Findings: []check.Finding{{Status: check.Skip, Code: "s", Message: val}}}},
			Meta{Tool: "guestcheck", Version: version, Root: "/", Host: Host{Hostname: host}, StartedAt: time.Unix(1700000000, 0), Duration: time.Second})
		doc := junitDoc(r)
		doc.Suites[0].SystemOut, doc.Suites[1].SystemErr = msg, val
		sameAsEncodingXML(t, doc)
	})
}
