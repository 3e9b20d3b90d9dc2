package docs

import (
	"slices"
	"testing"
)

func TestParseCodes(t *testing.T) {
	page := "# Check `x`\n\n| | |\n|---|---|\n| ID | `x` |\n\n## Codes\n\n| Code | Status | Meaning for snapshots | Fix |\n|---|---|---|---|\n" +
		"| `x-ok` | pass | All **good**, see [the page](other.md#a). | — |\n| `x-bad` | fail | A \\| bar. | Fix it. |\n\nprose | not a row\n"
	got := ParseCodes("x", page)
	if len(got) != 2 || got[0] != (Code{"x-ok", "x", "pass", "All good, see the page.", ""}) || got[1] != (Code{"x-bad", "x", "fail", "A | bar.", "Fix it."}) {
		t.Fatalf("ParseCodes = %+v", got)
	}
	if p := got[1].Page(); p != "/usr/share/doc/guestcheck/checks/x.md" {
		t.Errorf("Page %q", p)
	}
}

func TestEveryPageHasCodes(t *testing.T) {
	all := Codes()
	per := map[string]int{}
	for _, c := range all {
		per[c.Check]++
		if c.Status == "" || c.Meaning == "" {
			t.Errorf("%s (%s): empty status or meaning: %+v", c.Code, c.Check, c)
		}
	}
	for _, id := range Checks() {
		if per[id] == 0 {
			t.Errorf("docs/checks/%s.md: no Codes table found", id)
		}
	}
	if per[Runner] == 0 {
		t.Errorf("docs/checks/%s.md: no Codes table of the runner's codes found", Runner)
	}
	if slices.Contains(Checks(), Runner) {
		t.Errorf("Checks() lists the runner's page as a check's")
	}
}
