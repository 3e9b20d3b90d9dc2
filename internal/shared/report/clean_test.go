package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestLineFormatsAreClean: a report whose every string field carries
// escapes, C0 and C1 controls, bidi overrides and line breaks renders in
// the formats a person reads line by line (text, Nagios, TAP,
// Prometheus) with none of them raw or starting a line of their own
// (text shows exactly what Clean leaves); the structured formats escape
// every C0 control their syntax cannot carry.
func TestLineFormatsAreClean(t *testing.T) {
	var r Report
	if n := testenv.FillHostile(&r); n < 20 {
		t.Fatalf("only %d strings set", n)
	}
	r.Checks[0].Status, r.Checks[0].Findings[0].Status = "fail", "fail"
	o := Options{Text: TextOptions{Verbose: true}}
	for _, f := range Formats {
		out := render(t, r, f, o)
		if !utf8.Valid(out) {
			t.Errorf("%s: not UTF-8", f)
		}
		if !bytes.Contains(out, []byte("INJECTED")) {
			t.Errorf("%s: the hostile text is not in the output: nothing was tested", f)
		}
		for _, c := range string(out) {
			if c < 0x20 && c != '\n' && c != '\t' {
				t.Errorf("%s: %U raw in the output", f, c)
				break
			}
		}
		switch f {
		case FormatJSON, FormatJSONL, FormatJUnit:
			continue // escaped, line breaks kept for the programs reading them
		case FormatText:
			if want := render(t, clean.Value(r), f, o); !bytes.Equal(out, want) {
				t.Errorf("text: not what the cleaned report renders:\n%s\nwant\n%s", out, want)
			}
		default:
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(strings.TrimLeft(line, " "), "INJECTED") {
					t.Errorf("%s: a line break from the report reached the output: %q", f, line)
					break
				}
			}
		}
		for _, c := range string(out) {
			if c != '\n' && clean.Rune(c) != c {
				t.Errorf("%s: %U in the output", f, c)
				break
			}
		}
	}
	// Clean copies what it changes and leaves r as it was.
	if r.Checks[0].Summary != testenv.Hostile {
		t.Error("Clean changed the report it was given")
	}
}
