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

	"github.com/guestcheck/guestcheck/internal/guestfile/problem"
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

type parser struct {
	name  string
	s     string
	i     int // next byte
	line  int // line of s[i]
	vars  map[string]Var
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
	const (
		preKey = iota
		key
		preValue
		value
		valueEscape
		single
		double
		doubleEscape
		comment
		commentEscape
	)
	state := preKey
	var k, v strings.Builder
	keyLine, keyBlank, valBlank := 0, -1, -1
	refused := false
	push := func() {
		name, val := k.String(), v.String()
		if keyBlank >= 0 {
			name = name[:keyBlank]
		}
		if state == value && valBlank >= 0 {
			val = val[:valBlank]
		}
		k.Reset()
		v.Reset()
		switch {
		case !utf8.ValidString(name) || !utf8.ValidString(val):
			p.bad(keyLine, "invalid UTF-8 in the assignment, so systemd refuses the whole file")
			refused = true
		case !ValidName(name):
			p.bad(keyLine, "%q is not a valid variable name; systemd ignores the assignment", clip(name))
		default:
			p.vars[name] = Var{Value: val, Line: keyLine}
		}
	}
	for {
		line := p.line
		c, ok := p.next()
		if !ok {
			break
		}
		nl := c == '\n' || c == '\r'
		blank := c == ' ' || c == '\t' || nl
		switch state {
		case preKey:
			switch {
			case c == '#' || c == ';':
				state = comment
			case !blank:
				state, keyLine, keyBlank = key, line, -1
				k.WriteByte(c)
			}
		case key:
			switch {
			case nl:
				p.bad(keyLine, "not an assignment: %q", clip(k.String()))
				k.Reset()
				state = preKey
			case c == '=':
				state, valBlank = preValue, -1
			default:
				if !blank {
					keyBlank = -1
				} else if keyBlank < 0 {
					keyBlank = k.Len()
				}
				k.WriteByte(c)
			}
		case preValue:
			switch {
			case nl:
				push()
				state = preKey
			case c == '\'':
				state = single
			case c == '"':
				state = double
			case c == '\\':
				state = valueEscape
			case !blank:
				state = value
				v.WriteByte(c)
			}
		case value:
			switch {
			case nl:
				push()
				state = preKey
			case c == '\\':
				state, valBlank = valueEscape, -1
			default:
				if !blank {
					valBlank = -1
				} else if valBlank < 0 {
					valBlank = v.Len()
				}
				v.WriteByte(c)
			}
		case valueEscape:
			state = value
			if !nl {
				v.WriteByte(c)
			}
		case single:
			if c == '\'' {
				state = preValue
			} else {
				v.WriteByte(c)
			}
		case double:
			switch c {
			case '"':
				state = preValue
			case '\\':
				state = doubleEscape
			default:
				v.WriteByte(c)
			}
		case doubleEscape:
			state = double
			switch {
			case strings.IndexByte("\"\\`$", c) >= 0:
				v.WriteByte(c)
			case c != '\n':
				v.WriteByte('\\')
				v.WriteByte(c)
			}
		case comment:
			switch {
			case c == '\\':
				state = commentEscape
			case nl:
				state = preKey
			}
		case commentEscape:
			// Since systemd 254 an escaped newline no longer continues a comment.
			state = comment
			if nl {
				state = preKey
			}
		}
	}
	switch state {
	case preValue, value, valueEscape, single, double, doubleEscape:
		push()
	case key:
		p.bad(keyLine, "not an assignment: %q", clip(k.String()))
	}
	if refused {
		p.vars = map[string]Var{}
	}
}

// clip cuts s so that a problem stays one readable line.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
