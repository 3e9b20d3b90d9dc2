// Package envfile parses files of shell-style KEY=value assignments in the
// two ways their owners read them:
//
//   - Systemd: what a unit's EnvironmentFile= loads (systemd's
//     load_env_file, then the removal of invalid names), e.g.
//     /etc/sysconfig/qemu-ga. '#' or ';' starts a comment only where a key
//     could start; an unquoted value keeps '#', quotes and '$' as
//     written, loses its trailing blanks, and a backslash takes the next
//     character literally. Inside double quotes only \" \\ \` \$ and
//     backslash-newline are escapes. There is no "export": such a line
//     has an invalid name and is dropped. A NUL byte, or invalid UTF-8 in
//     a key or value, makes systemd refuse the whole file.
//   - Shell: what sh sets when it sources the file (". FILE"), as Red
//     Hat's network scripts source ifcfg-* and init scripts source
//     /etc/default/*: "export " is allowed, several assignments may share
//     a line, '#' starts a comment at the start of a word, and quoting
//     follows POSIX sh (backslash, '...', "..."). A command, or an
//     assignment that only prefixes one, is a problem, because sourcing
//     would run it.
//
// In both, expansions ($X, ${X}, `...`) are kept verbatim: guestcheck
// never runs them. The last assignment of a name wins. Parsing is pure.
package envfile

import (
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Dialect selects whose rules apply.
type Dialect int

const (
	// Systemd is EnvironmentFile= as systemd loads it.
	Systemd Dialect = iota
	// Shell is what a POSIX shell sets when it sources the file.
	Shell
)

// Var is the assignment of one variable that wins.
type Var struct {
	Value string
	Line  int // where the assignment starts
}

// Parse parses b, shown to the operator as name, in dialect d. Its
// problems are the lines the owner rejects, ignores or would execute.
func Parse(name string, b []byte, d Dialect) (map[string]Var, []problem.Problem) {
	p := &parser{name: name, s: string(b), line: 1, vars: map[string]Var{}}
	if d == Shell {
		p.shell()
	} else {
		p.systemd()
	}
	return p.vars, p.probs
}

// Assignment is one assignment that sourcing the file performs, where it
// is written: what an editor needs to remove a setting and keep every
// other byte.
type Assignment struct {
	Name, Value string
	Line        int // where the assignment starts
	// Start and End are the byte offsets of the word "NAME=value" as
	// written (quotes and backslash-newlines included).
	Start, End int
	// CmdStart and CmdEnd span the simple command the assignment belongs
	// to ("export A=1 B=2"), with the blanks that follow it and the ';'
	// that ends it, if any, but not a comment or a newline after it.
	CmdStart, CmdEnd int
}

// Assignments returns every assignment that sourcing b with sh performs,
// in file order (the Shell dialect; Parse keeps the last of each name),
// and the same problems as Parse.
func Assignments(name string, b []byte) ([]Assignment, []problem.Problem) {
	p := &parser{name: name, s: string(b), line: 1, vars: map[string]Var{}}
	p.shell()
	return p.all, p.probs
}

type parser struct {
	name  string
	s     string
	i     int // next byte
	line  int // line of s[i]
	vars  map[string]Var
	all   []Assignment // Shell: every assignment performed, in order
	probs []problem.Problem
}

func (p *parser) bad(n int, format string, a ...any) {
	p.probs = append(p.probs, problem.At(p.name, n, format, a...))
}

// next returns the next byte, counting lines; ok is false at the end.
func (p *parser) next() (c byte, ok bool) {
	if p.i >= len(p.s) {
		return 0, false
	}
	c = p.s[p.i]
	p.i++
	if c == '\n' {
		p.line++
	}
	return c, true
}

// ValidName reports whether s can name an environment variable for both
// systemd and sh: a letter or '_', then letters, digits and '_'.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// systemd follows parse_env_file_internal's states over the whole file.
func (p *parser) systemd() {
	if i := strings.IndexByte(p.s, 0); i >= 0 {
		p.bad(1+strings.Count(p.s[:i], "\n"), "line contains a NUL byte, so systemd refuses the whole file")
		p.vars = map[string]Var{}
		return
	}
	m := &sdMachine{parser: p, keyBlank: -1, valBlank: -1}
	for {
		line := p.line
		c, ok := p.next()
		if !ok {
			break
		}
		m.step(c, line)
	}
	m.finish()
	if m.refused {
		p.vars = map[string]Var{}
	}
}

// sdState is a state of parse_env_file_internal.
type sdState int

const (
	sdPreKey sdState = iota
	sdKey
	sdPreValue
	sdValue
	sdValueEscape
	sdSingle
	sdDouble
	sdDoubleEscape
	sdComment
	sdCommentEscape
)

// sdMachine is systemd's env-file reader part way through a file: the
// state, the key and value read so far, and where their trailing blanks
// start (-1 when they end in a non-blank), which systemd cuts off.
type sdMachine struct {
	*parser
	state                       sdState
	k, v                        strings.Builder
	keyLine, keyBlank, valBlank int
	// refused is set by invalid UTF-8: systemd then loads nothing.
	refused bool
}

// step feeds one byte, read at line.
func (m *sdMachine) step(c byte, line int) {
	nl := c == '\n' || c == '\r'
	blank := c == ' ' || c == '\t' || nl
	switch m.state {
	case sdPreKey, sdKey:
		m.keyByte(c, line, nl, blank)
	case sdPreValue, sdValue, sdValueEscape:
		m.valueByte(c, nl, blank)
	case sdSingle, sdDouble, sdDoubleEscape:
		m.quotedByte(c)
	case sdComment, sdCommentEscape:
		m.commentByte(c, nl)
	}
}

// keyByte reads before and inside a key.
func (m *sdMachine) keyByte(c byte, line int, nl, blank bool) {
	if m.state == sdPreKey {
		switch {
		case c == '#' || c == ';':
			m.state = sdComment
		case !blank:
			m.state, m.keyLine, m.keyBlank = sdKey, line, -1
			m.k.WriteByte(c)
		}
		return
	}
	switch {
	case nl:
		m.bad(m.keyLine, "not an assignment: %q", clip(m.k.String()))
		m.k.Reset()
		m.state = sdPreKey
	case c == '=':
		m.state, m.valBlank = sdPreValue, -1
	default:
		if !blank {
			m.keyBlank = -1
		} else if m.keyBlank < 0 {
			m.keyBlank = m.k.Len()
		}
		m.k.WriteByte(c)
	}
}

// valueByte reads an unquoted value and what comes before it.
func (m *sdMachine) valueByte(c byte, nl, blank bool) {
	switch m.state {
	case sdPreValue:
		switch {
		case nl:
			m.push()
			m.state = sdPreKey
		case c == '\'':
			m.state = sdSingle
		case c == '"':
			m.state = sdDouble
		case c == '\\':
			m.state = sdValueEscape
		case !blank:
			m.state = sdValue
			m.v.WriteByte(c)
		}
	case sdValue:
		switch {
		case nl:
			m.push()
			m.state = sdPreKey
		case c == '\\':
			m.state, m.valBlank = sdValueEscape, -1
		default:
			if !blank {
				m.valBlank = -1
			} else if m.valBlank < 0 {
				m.valBlank = m.v.Len()
			}
			m.v.WriteByte(c)
		}
	case sdValueEscape:
		m.state = sdValue
		if !nl {
			m.v.WriteByte(c)
		}
	}
}

// quotedByte reads inside single or double quotes.
func (m *sdMachine) quotedByte(c byte) {
	switch m.state {
	case sdSingle:
		if c == '\'' {
			m.state = sdPreValue
		} else {
			m.v.WriteByte(c)
		}
	case sdDouble:
		switch c {
		case '"':
			m.state = sdPreValue
		case '\\':
			m.state = sdDoubleEscape
		default:
			m.v.WriteByte(c)
		}
	case sdDoubleEscape:
		m.state = sdDouble
		switch {
		case strings.IndexByte("\"\\`$", c) >= 0:
			m.v.WriteByte(c)
		case c != '\n':
			m.v.WriteByte('\\')
			m.v.WriteByte(c)
		}
	}
}

// commentByte reads a comment, to the end of its line.
func (m *sdMachine) commentByte(c byte, nl bool) {
	if m.state == sdComment {
		switch {
		case c == '\\':
			m.state = sdCommentEscape
		case nl:
			m.state = sdPreKey
		}
		return
	}
	// Since systemd 254 an escaped newline no longer continues a comment.
	m.state = sdComment
	if nl {
		m.state = sdPreKey
	}
}

// finish ends the file: a value in progress is assigned, a key alone is
// a problem.
func (m *sdMachine) finish() {
	switch m.state {
	case sdPreValue, sdValue, sdValueEscape, sdSingle, sdDouble, sdDoubleEscape:
		m.push()
	case sdKey:
		m.bad(m.keyLine, "not an assignment: %q", clip(m.k.String()))
	}
}

// push assigns the key and value read, without their trailing blanks
// (the value's only when it was unquoted to the end).
func (m *sdMachine) push() {
	name, val := m.k.String(), m.v.String()
	if m.keyBlank >= 0 {
		name = name[:m.keyBlank]
	}
	if m.state == sdValue && m.valBlank >= 0 {
		val = val[:m.valBlank]
	}
	m.k.Reset()
	m.v.Reset()
	switch {
	case !utf8.ValidString(name) || !utf8.ValidString(val):
		m.bad(m.keyLine, "invalid UTF-8 in the assignment, so systemd refuses the whole file")
		m.refused = true
	case !ValidName(name):
		m.bad(m.keyLine, "%q is not a valid variable name; systemd ignores the assignment", clip(name))
	default:
		m.vars[name] = Var{Value: val, Line: m.keyLine}
	}
}

// clip cuts s so that a problem stays one readable line.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
