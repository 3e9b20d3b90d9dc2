package reportv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldens are the report package's JSON goldens: what guestcheck writes.
func goldens(t testing.TB) []string {
	fs, err := filepath.Glob("../report/testdata/*.json")
	if err != nil || len(fs) == 0 {
		t.Fatalf("no report goldens: %v", err)
	}
	return fs
}

// TestDecodeRoundTrip: every report guestcheck writes decodes, and
// encodes again to the same JSON: no field is lost between the writer
// and the readers.
func TestDecodeRoundTrip(t *testing.T) {
	for _, p := range goldens(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Decode(b)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		again, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bytes.TrimSpace(again), bytes.TrimSpace(b)) {
			t.Errorf("%s: decoded and encoded again differs:\n%s", p, again)
		}
	}
}

// minimal is a report with every key the schema requires, and one
// check with one warning.
const minimal = `{"schema_version":1,"tool":"guestcheck","version":"1.0","host":{"hostname":"h","boot_id":""},"root":"/",` +
	`"started_at":"2026-01-02T03:04:05Z","duration_ms":1,"status":"warn","summary":{"pass":0,"warn":1,"fail":0,"skip":0,"error":0},` +
	`"checks":[{"id":"a","title":"A","status":"warn","summary":"s","duration_ms":0,"findings":[{"status":"warn","code":"x","message":"m","remediation":"r"}]}]}`

// with is minimal with its first old replaced by new.
func with(old, new string) string { return strings.Replace(minimal, old, new, 1) }

func TestDecodeRefuses(t *testing.T) {
	if r, err := Decode([]byte(minimal)); err != nil || r.Check("a").Finding("x") == nil || r.Check("b") != nil {
		t.Fatalf("a minimal report: %+v, %v", r, err)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{" \n", "empty"},
		{`{"schema_version":1`, "not a JSON report"},
		{`[1]`, "not a JSON report"},
		{`{"schema_version":1,"tool":"goss"}`, `not a guestcheck report (tool "goss")`},
		{`{"tool":"guestcheck"}`, `not a guestcheck report`},
		{`{"schema_version":2,"tool":"guestcheck"}`, "schema_version 2, and this build reads 1"},
		{with(`"status":"warn"`, `"status":"ok"`), `status "ok" is not one of`},
		{with(`"status":"warn","summary":"s"`, `"status":7,"summary":"s"`), "checks[0].status is a number, not a string"},
		{with(`"id":"a",`, ``), `checks[0].id is missing`},
		{with(`"id":"a",`, `"id":null,`), `checks[0].id is null, not a string`},
		{with(`"status":"warn","summary":"s"`, `"status":"PASS","summary":"s"`), `checks[0].status "PASS" is not one of`},
		{with(`{"status":"warn","code":"x"`, `{"code":"x"`), `checks[0].findings[0].status is missing`},
		{with(`,"remediation":"r"`, ``), `checks[0].findings[0]: a warn finding without a remediation`},
		{with(`"code":"x"`, `"code":"X y"`), `checks[0].findings[0].code "X y" does not match`},
		{with(`"version":"1.0"`, `"version":""`), `version is empty`},
		{with(`"remediation":"r"`, `"remediation":"r","waived":{"reason":"x","expire":"2026-01-01"}`), `waived has the key "expire"`},
		{with(`"root":"/"`, `"root":"/","identity":{"ssh_host_keys":"k"}`), "identity.ssh_host_keys is a string, not an array"},
		{with(`"status":"warn"`, `"status":"`+strings.Repeat(`x\n`, 500)+`"`), `status "x x x`},
	} {
		_, err := Decode([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%.60q) = %v, want %q", tc.in, err, tc.want)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 300 {
			t.Errorf("Decode(%.60q): the error is not one bounded line: %q", tc.in, msg)
		}
	}
	var ve *VersionError
	if _, err := Decode([]byte(`{"schema_version":3,"tool":"guestcheck"}`)); !errors.As(err, &ve) || ve.Got != 3 {
		t.Errorf("another version is not a VersionError: %v", err)
	}
}

// FuzzDecode: Decode never panics; what it accepts has only valid
// statuses and survives encoding and decoding again unchanged.
func FuzzDecode(f *testing.F) {
	for _, p := range goldens(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(minimal))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		if !r.Status.Valid() {
			t.Fatalf("accepted status %q", r.Status)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := Decode(again)
		if err != nil {
			t.Fatalf("what Decode accepted does not decode again: %v", err)
		}
		b2, _ := json.Marshal(r2)
		if !bytes.Equal(again, b2) {
			t.Fatalf("not stable:\n%s\n%s", again, b2)
		}
	})
}
