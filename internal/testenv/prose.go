package testenv

import (
	"regexp"
	"strings"
)

// RealCapsNames are the ALL_CAPS_WITH_UNDERSCORES words a reference page
// may use because they are the real names of settings a reader edits
// (the variables of the guest agent's sysconfig file, a capability,
// the environment variable cloud-init reads),
// not placeholders.
var RealCapsNames = map[string]bool{"BLOCK_RPCS": true, "FILTER_RPC_ARGS": true, "DAEMON_ARGS": true, "CAP_SYS_ADMIN": true, "KERNEL_CMDLINE": true}

// jargon are the marks of text that is not yet prose for a reader: a
// template's placeholders, a page's internal cross-references and
// telegraphic fragments copied from code.
var jargon = []struct {
	re  *regexp.Regexp
	why string
}{
	{regexp.MustCompile(`\b[a-z][a-z0-9]*_[A-Z]{2,}[A-Za-z0-9_]*`), "a template placeholder in a name"},
	{regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`), "an ALL_CAPS_WITH_UNDERSCORES placeholder"},
	{regexp.MustCompile(`(?i)\b(?:the rules of )?steps? [0-9]+\b`), "a reference to a numbered step of the page, which explain does not show"},
	{regexp.MustCompile(`\b(?:TODO|FIXME|XXX|TBD)\b`), "a note to the writer"},
	{regexp.MustCompile(`\{\{|%[sdvqw]\b|%\[[0-9]\]`), "an unreplaced template or format verb"},
	{regexp.MustCompile(`\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+ not run\b`), `a fragment ("NAME not run") instead of a sentence`},
	// pkg.Name, but not a key path such as checks.ID.timeout.
	{regexp.MustCompile(`\b[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]*\b(?:\.[a-z_]+)?`), "a Go identifier qualified by its package"},
}

// NotProse returns what keeps text from reading as prose for a user: the
// marks of jargon above, and any of goNames (identifiers declared in the
// module's Go code, such as the constants that hold finding codes) used as
// a word. Each problem quotes the offending words.
func NotProse(text string, goNames map[string]bool) []string {
	var out []string
	for _, j := range jargon {
		for _, m := range j.re.FindAllString(text, -1) {
			if !RealCapsNames[m] && strings.Count(m, ".") < 2 {
				out = append(out, strings.TrimSpace(m)+": "+j.why)
			}
		}
	}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		if goNames[w] {
			out = append(out, w+": a Go identifier of guestcheck's code")
		}
	}
	return out
}
