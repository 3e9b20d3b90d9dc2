package fleet

import (
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
)

// Every string of a survey came from somewhere guestcheck does not
// control: a guest's report, its agent, a hypervisor's or a cluster's
// API, another host's survey file. Each renderer writes the Result it is
// given only after cleanResult (clean.Value), so that no such string
// can put escape sequences, line breaks or reordered text on an
// operator's terminal, a log or a dashboard, whichever field it arrives
// in and whichever output form (text, JSON, JUnit, Prometheus) carries
// it. JSON consumers get the cleaned strings too: jq -r would print them
// raw.

// cleanResult is r with every string in it cleaned (clean.Value):
// names, reasons, source errors, collisions, every VM's report.
func cleanResult(r Result) Result { return clean.Value(r) }

// cleanVM is cleanResult for one VM, whose report a merge reads again
// from its file only while it is rendered.
func cleanVM(vm VM) VM { return clean.Value(vm) }

// cleanJSON is whether b, a report as a survey file holds it, may be
// copied into JSON output as it is: valid UTF-8, no escape but \" \\ and
// \/ (encoding/json writes every control character, U+2028 and U+2029
// as one), and no character clean.Text would change.
func cleanJSON(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\':
			if i+1 >= len(b) || !strings.ContainsRune(`"\/`, rune(b[i+1])) {
				return false
			}
			i++
		case c >= 0x80:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 || clean.Rune(r) != r {
				return false
			}
			i += n - 1
		}
	}
	return true
}
