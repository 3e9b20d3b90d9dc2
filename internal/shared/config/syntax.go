package config

import (
	"bytes"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// flowScan follows, roughly as YAML does, the brackets of flow lists and
// mappings and the quotes of quoted text, to say where a file that does
// not parse went wrong: yaml.v3 gives the line before an unclosed "[" (its
// parser counts from 0 there) in its own terms ("did not find expected
// ',' or ']'"). It is used only on a file yaml.v3 refused.
type flowScan struct {
	stack     []opener // flow brackets open, innermost last
	quote     byte     // the quote of an open quoted text, or 0
	quoteLine int
	start     bool // a node may start here (a bracket or quote opens one)
	closed    bool // the last token closed the outermost flow collection
}

type opener struct {
	ch   byte
	line int
}

// flowProblem is the line and words of the first unclosed or unmatched
// bracket or quote in b; ok is false when there is none.
func flowProblem(b []byte) (line int, msg string, ok bool) {
	var s flowScan
	blockIndent := -1 // inside a block scalar (| or >) indented past this
	for i, l := range strings.Split(string(b), "\n") {
		n := i + 1
		l = strings.TrimSuffix(l, "\r")
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if blockIndent >= 0 {
			if strings.TrimSpace(l) == "" || indent > blockIndent {
				continue
			}
			blockIndent = -1
		}
		if len(s.stack) == 0 && s.quote == 0 {
			s.start, s.closed = true, false
		}
		line, msg, block := s.line(l, n)
		if msg != "" {
			return line, msg, true
		}
		if block {
			blockIndent = indent
		}
	}
	switch {
	case s.quote != 0:
		return s.quoteLine, fmt.Sprintf("the quoted text opened with %c is never closed; end it with another %c", s.quote, s.quote), true
	case len(s.stack) > 0:
		o := s.stack[len(s.stack)-1]
		w := flowWords[o.ch]
		return o.line, fmt.Sprintf("the %s opened with %q %s never closed; close %s with %q", w.kind, string(o.ch), w.isAre, w.itThem, w.close), true
	}
	return 0, "", false
}

// line scans one line; block reports a block scalar starting on it.
func (s *flowScan) line(l string, n int) (int, string, bool) {
	for i := 0; i < len(l); i++ {
		c := l[i]
		spaceAfter := i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t'
		switch {
		case s.quote == '"':
			if c == '\\' {
				i++
			} else if c == '"' {
				s.quote = 0
			}
			continue
		case s.quote == '\'':
			if c == '\'' && i+1 < len(l) && l[i+1] == '\'' {
				i++
			} else if c == '\'' {
				s.quote = 0
			}
			continue
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return 0, "", false
		case c == ' ' || c == '\t':
			continue
		case s.start && (c == '"' || c == '\''):
			s.quote, s.quoteLine, s.start = c, n, false
			continue
		case s.start && (c == '[' || c == '{'):
			s.stack = append(s.stack, opener{c, n})
			continue
		case s.start && len(s.stack) == 0 && (c == '|' || c == '>'):
			return 0, "", true
		case c == ']' || c == '}':
			if len(s.stack) == 0 {
				if s.closed {
					return n, fmt.Sprintf("%q closes nothing: every %q before it is closed already; remove it", string(c), string(opening(c))), false
				}
				s.start = false // part of a plain text, as in "a]"
				continue
			}
			if o, w := s.stack[len(s.stack)-1], flowWords[s.stack[len(s.stack)-1].ch]; o.ch != opening(c) {
				return n, fmt.Sprintf("%q does not close the %s opened with %q on line %d; close %s with %q", string(c), w.kind, string(o.ch), o.line, w.itThem, w.close), false
			}
			s.stack = s.stack[:len(s.stack)-1]
			s.start, s.closed = false, len(s.stack) == 0
			continue
		}
		s.closed = false
		inFlow := len(s.stack) > 0
		s.start = inFlow && c == ',' || c == ':' && spaceAfter || (c == '-' || c == '?') && s.start && spaceAfter
	}
	return 0, "", false
}

// flowWords are what a message says of a flow collection, by the bracket
// that opens it: "the list opened with "[" is never closed; close it
// with "]"".
var flowWords = map[byte]struct{ close, kind, isAre, itThem string }{
	'[': {"]", "list", "is", "it"},
	'{': {"}", "keys and values", "are", "them"},
}

// opening is the bracket that the closing bracket c closes.
func opening(c byte) byte {
	if c == ']' {
		return '['
	}
	return '{'
}

// firstBadLine is the first line at which b stops being YAML with the
// complaint msg: where yaml.v3 names the line before (its parser counts
// some lines from 0) or none at all ("unknown anchor"), the shortest
// failing prefix ends at the line at fault. 0 when none does, or for a
// file too long to search so.
func firstBadLine(b []byte, msg string) int {
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > 300 || len(b) > 64<<10 {
		return 0
	}
	for k := 1; k <= len(lines); k++ {
		var n yaml.Node
		err := yaml.Unmarshal(bytes.Join(lines[:k], nil), &n)
		if err != nil && complaint(err.Error()) == msg {
			return k
		}
	}
	return 0
}

// complaint is a yaml.v3 message without its prefix and line.
func complaint(s string) string {
	s = strings.TrimPrefix(s, "yaml: ")
	if m := yamlLine().FindStringSubmatch(s); m != nil {
		return m[2]
	}
	return s
}
