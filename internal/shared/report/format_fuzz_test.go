package report

import (
	"slices"
	"strings"
	"testing"
)

// FuzzParseFormat: exactly the listed names parse, each to itself, and a
// refusal lists the valid names on one line.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"text", "json", "JSON", "tap ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm, err := ParseFormat(s)
		valid := slices.Contains(Formats, Format(s))
		if (err == nil) != valid || (valid && string(fm) != s) {
			t.Fatalf("ParseFormat(%q) = %q, %v", s, fm, err)
		}
		if err != nil && (!strings.Contains(err.Error(), FormatNames()) || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("refusal %q", err)
		}
	})
}
