package prove

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestEveryStringIsCleaned: a prove report whose every string holds
// escapes, controls, bidi overrides and line breaks (what a guest's
// report, its agent or its console may say) reaches every output
// cleaned, and the report itself is not written.
func TestEveryStringIsCleaned(t *testing.T) {
	r := badReport()
	n := testenv.FillHostile(&r)
	if n < 30 {
		t.Fatalf("only %d strings set: the walk missed the report", n)
	}
	for name, write := range map[string]func(*bytes.Buffer, Report) error{
		"text":  func(b *bytes.Buffer, r Report) error { return WriteText(b, r) },
		"json":  func(b *bytes.Buffer, r Report) error { return WriteJSON(b, r) },
		"junit": func(b *bytes.Buffer, r Report) error { return WriteJUnit(b, r) },
	} {
		var b bytes.Buffer
		if err := write(&b, r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := b.String()
		if !utf8.ValidString(out) {
			t.Errorf("%s: not UTF-8", name)
		}
		for _, c := range out {
			if c != '\n' && clean.Rune(c) != c {
				t.Errorf("%s: %U in the output", name, c)
				break
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " "), "INJECTED") {
				t.Errorf("%s: a line break from the input reached the output: %q", name, line)
				break
			}
		}
		for _, esc := range []string{`\n`, `\r`, `\t`, `\u00`, `\u20`, `&#x`, `&#1`, `&#2`, `&#3`, `&#9`} {
			if strings.Contains(out, esc) {
				t.Errorf("%s: %s in the output: an escaped control character", name, esc)
			}
		}
		if !strings.Contains(out, "INJECTED") {
			t.Errorf("%s: the hostile text is not in the output at all", name)
		}
	}
	if r2 := clean.Value(r); r2.Clones[0].Name == r.Clones[0].Name {
		t.Error("the report's strings were written by a renderer, or Clean did nothing")
	}
}
