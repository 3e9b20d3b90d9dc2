package reportv1

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPatternsAreTheirRegexps holds each hand-written matcher to its
// pattern's regular expression, on the schema's own examples and on
// random strings over the characters the patterns name and a few more.
func TestPatternsAreTheirRegexps(t *testing.T) {
	examples := []string{"", "0", "ab", "ab:", "ab:cd", "AB:cd", "ab:c", "ab-cd", "a", "a-b", "-a", "a-", "a--b", "a1-b2-c3",
		"192.0.2.1/24", "fe80::1/64", "/24", "1/", "1/1234", "g/1", "2027-01-31", "2027-1-31", "20270131", "2027-01-31\n",
		"SHA256:" + strings.Repeat("A", 43), "SHA256:" + strings.Repeat("A", 42), "sha256:" + strings.Repeat("A", 43),
		strings.Repeat("a", 32), strings.Repeat("a", 31), strings.Repeat("A", 32), strings.Repeat("a", 31) + "\xff"}
	const alphabet = "0123456789abcdefgzABFGZ:/.-+ SHA256\n\xff"
	rng := rand.New(rand.NewPCG(7, 7))
	for _, p := range []*Pattern{hex32, fingerprint, hexBytes, kebab, cidr, date} {
		re := regexp.MustCompile(p.Text)
		cases := append([]string(nil), examples...)
		for range 20000 {
			n := rng.IntN(52)
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			cases = append(cases, string(b))
		}
		matched := 0
		for _, s := range cases {
			if got, want := p.Match([]byte(s)), re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, the regexp %v", p.Text, s, got, want)
			}
			if re.MatchString(s) {
				matched++
			}
		}
		if matched == 0 {
			t.Errorf("%s: no case matches, which says little", p.Text)
		}
	}
}

// TestReportShapeTakesTheGoldens: every report guestcheck writes meets
// the report's shape.
func TestReportShapeTakesTheGoldens(t *testing.T) {
	for _, p := range goldens(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(b, ReportShape); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestCheckRefuses(t *testing.T) {
	const ok = `{"schema_version":1,"tool":"guestcheck","version":"1","host":{"hostname":"h","boot_id":""},"root":"/",` +
		`"started_at":"2026-01-01T00:00:00Z","duration_ms":3,"status":"warn","summary":{"pass":0,"warn":1,"fail":0,"skip":0,"error":0},` +
		`"checks":[{"id":"a-b","title":"A","status":"warn","summary":"s","duration_ms":0,"findings":[{"status":"warn","code":"c","message":"m","remediation":"r"}]}]}`
	if err := Check([]byte(ok), ReportShape); err != nil {
		t.Fatalf("a minimal report: %v", err)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`"duration_ms":3`, `"duration_ms":-3`, "at /duration_ms: got -3, want an integer written in plain digits"},
		{`"status":"warn","summary":{`, `"status":"ok","summary":{`, "at /status: value must be one of 'pass'"},
		{`,"remediation":"r"`, ``, "at /checks/0/findings/0: missing property 'remediation'"},
		{`"remediation":"r"`, `"remediation":""`, "at /checks/0/findings/0: an empty remediation"},
		{`"remediation":"r"`, `"remediation":"r","waived":{"reason":"x","by":"me"}`, `at /checks/0/findings/0/waived/by: additional property "by" not allowed`},
		{`"id":"a-b"`, `"id":"a--b"`, `at /checks/0/id: "a--b" does not match pattern`},
		{`"findings":[{`, `"findings":[],"x":[{`, "at /checks/0/findings: minItems: got 0, want 1"},
		{`"root":"/"`, `"root":"/","root":"/"`, `at /root: key "root" given twice`},
		{`"root":"/"`, `"root":7`, "at /root: got number, want string"},
		{`"root":"/"`, `"root":"/`, "at /root: not JSON"},
		{`"root":"/"`, `"a/b~c":{"d":[1,2,tru]}`, "at /a~1b~0c/d/2: not JSON"},
	} {
		in := strings.Replace(ok, tc.old, tc.new, 1)
		err := Check([]byte(in), ReportShape)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -> %s: %v, want %q", tc.old, tc.new, err, tc.want)
		}
	}
}

// FuzzCheck: Check never panics but with a *SchemaError, takes with an
// empty Shape exactly the JSON encoding/json takes (but for nesting
// past its bound), and takes as a report only JSON.
func FuzzCheck(f *testing.F) {
	for _, p := range goldens(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{"a":[1,-0.5e+3,"\u00e9\n",true,false,null,{}]}`, `"x"`, ` 1 `, `[]`, `{"a":1,}`, `01`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(b, &Shape{})
		if err != nil && !errors.As(err, new(*SchemaError)) {
			t.Fatalf("not a SchemaError: %v", err)
		}
		if valid := json.Valid(b); (err == nil) != valid && !strings.Contains(fmtErr(err), "nested deeper") {
			t.Fatalf("json.Valid %v, Check %v", valid, err)
		}
		if Check(b, ReportShape) == nil && !json.Valid(b) {
			t.Fatal("a report that is not JSON")
		}
	})
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
