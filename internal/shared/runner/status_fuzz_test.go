package runner

import "testing"

// FuzzParseStatus: exactly the valid words parse, each to itself.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"pass", "warn", "fail", "skip", "error", "", "PASS", "pass "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStatus(s)
		if (err == nil) != Status(s).Valid() || (err == nil && string(st) != s) || (err != nil && st != "") {
			t.Fatalf("ParseStatus(%q) = %q, %v", s, st, err)
		}
	})
}
