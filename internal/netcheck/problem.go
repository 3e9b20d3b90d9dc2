package netcheck

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Problem is one defect found while parsing a configuration file, located
// by file and line so that a finding can point the operator straight at it.
type Problem struct {
	File string // the name shown to the operator (fs.Root.Display)
	Line int    // 1-based; 0 when the problem concerns the whole file
	Msg  string
}

// String renders the problem as "file:line: message".
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// joinProblems renders problems one per line for a finding's detail.
func joinProblems(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "\n")
}

// lines splits b into lines without their terminators. A final line
// without a newline is kept.
func lines(b []byte) []string {
	s := strings.Split(string(b), "\n")
	if len(s) > 0 && s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	for i, l := range s {
		s[i] = strings.TrimSuffix(l, "\r")
	}
	return s
}

// binaryLine reports why a line cannot be text: a NUL byte or invalid
// UTF-8, which in a configuration file means corruption, not content.
func binaryLine(l string) string {
	if strings.IndexByte(l, 0) >= 0 {
		return "contains a NUL byte"
	}
	if !utf8.ValidString(l) {
		return "is not valid UTF-8"
	}
	return ""
}

// quoteShort quotes s for a message, cutting very long values so that a
// finding stays one readable line.
func quoteShort(s string) string {
	const max = 60
	if len(s) > max {
		s = s[:max] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// loc renders a place as "file:line".
func loc(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

// problemsByFile groups problems by their file, files in the order they
// first appear, and sums each group up in one line: the first problem and
// how many more there are.
func problemsByFile(ps []Problem) (groups [][]Problem, summary []string) {
	at := map[string]int{}
	for _, p := range ps {
		i, ok := at[p.File]
		if !ok {
			i = len(groups)
			at[p.File] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	for _, g := range groups {
		msg := g[0].String()
		if len(g) > 1 {
			msg += fmt.Sprintf(" (+%d more)", len(g)-1)
		}
		summary = append(summary, msg)
	}
	return groups, summary
}
