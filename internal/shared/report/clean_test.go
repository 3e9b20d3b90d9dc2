package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

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
			if clean := render(t, Clean(r), f, o); !bytes.Equal(out, clean) {
				t.Errorf("text: not what the cleaned report renders:\n%s\nwant\n%s", out, clean)
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
			if c != '\n' && CleanRune(c) != c {
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

// TestCleanText: what is kept, what becomes a space and what U+FFFD.
func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"web-1 ünïcode 名前":            "web-1 ünïcode 名前",
		"a\nb\r\nc\td":                "a b  c d",
		"\x1b[31mred":                 "\uFFFD[31mred",
		"\u009b31m \u0085":            "\uFFFD31m  ",
		"\u202eevil\u202c \u2067x":    "\uFFFDevil\uFFFD \uFFFDx",
		"bad\xffutf8":                 "bad\uFFFDutf8",
		"line\u2028sep\u2029par\x00n": "line sep par\uFFFDn",
	} {
		if got := CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
		if got := CleanText(in); !isClean(got) {
			t.Errorf("CleanText(%q) = %q, which is not clean", in, got)
		}
	}
}
