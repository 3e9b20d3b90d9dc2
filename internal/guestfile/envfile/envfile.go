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
	"fmt"
	"strings"
	"unicode/utf8"
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

// Problem is a line the owner rejects, ignores or would execute.
type Problem struct {
	File string
	Line int // 1-based
	Msg  string
}

// String renders the problem as "file:line: message".
func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Parse parses b, shown to the operator as name, in dialect d.
func Parse(name string, b []byte, d Dialect) (map[string]Var, []Problem) {
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
	probs []Problem
}

func (p *parser) bad(n int, format string, a ...any) {
	p.probs = append(p.probs, Problem{File: p.name, Line: n, Msg: fmt.Sprintf(format, a...)})
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

// shell reads the file as bash sources it: one line (a list of simple
// commands) at a time, so that a syntax error anywhere on a line keeps all
// of it from running and stops the file there.
func (p *parser) shell() {
	var pending []assignment // the current line's, set when it ends
	commit := func() {
		for _, a := range pending {
			p.vars[a.name] = Var{Value: a.val, Line: a.line}
		}
		pending = nil
	}
	for {
		p.skipBlanks()
		if p.i >= len(p.s) {
			commit()
			return
		}
		start := p.line
		switch p.s[p.i] {
		case '\n':
			p.next()
			commit()
			continue
		case '#':
			p.skipComment()
			continue
		case ';':
			p.bad(start, "syntax error: unexpected ';', and sh stops reading the file here")
			return
		}
		eol := strings.IndexByte(p.s[p.i:], '\n')
		if eol < 0 {
			eol = len(p.s) - p.i
		}
		if l := p.s[p.i : p.i+eol]; strings.IndexByte(l, 0) >= 0 || !utf8.ValidString(l) {
			why := "is not valid UTF-8"
			if strings.IndexByte(l, 0) >= 0 {
				why = "contains a NUL byte"
			}
			p.bad(start, "line %s", why)
			p.skipComment()
			continue
		}
		if !p.command(&pending) {
			return
		}
	}
}

type assignment struct {
	name, val string
	line      int
}

// command reads one simple command, "[export] NAME=word...", up to a
// newline, ';' or comment, and adds its assignments to pending. A command
// word makes the assignments before it apply to that command only, so
// they are dropped. It returns false on a syntax error.
func (p *parser) command(pending *[]assignment) bool {
	start, from := p.line, p.i
	var got []assignment
	export, cmd := false, false
	for n := 0; ; n++ {
		p.skipBlanks()
		if p.i >= len(p.s) || p.s[p.i] == '\n' || p.s[p.i] == '#' {
			break
		}
		if c := p.s[p.i]; c == ';' {
			p.i++
			break
		} else if strings.IndexByte("&|<>()", c) >= 0 {
			p.bad(start, "shell operator %q: the file is not only assignments", c)
			p.skipComment()
			return true
		}
		line := p.line
		name, isAsg := "", false
		if !cmd && !export {
			name, isAsg = p.assignmentName()
		}
		w, ok := p.word()
		if !ok {
			p.bad(line, "unterminated quote, and sh stops reading the file here")
			return false
		}
		switch {
		case isAsg:
			got = append(got, assignment{name, w, line})
		case n == 0 && w == "export":
			export = true
		case export:
			// export's arguments are words after quote removal: NAME=value
			// sets, NAME alone sets nothing.
			if k, v, ok := strings.Cut(w, "="); ok && ValidName(k) {
				got = append(got, assignment{k, v, line})
			} else if !ValidName(w) {
				p.bad(line, "export: %q is not a valid variable name", clip(w))
			}
		default:
			cmd = true
		}
	}
	if cmd {
		t, _, _ := strings.Cut(p.s[from:p.i], "\n")
		p.bad(start, "expected KEY=value, got %q (sourcing the file runs it as a command)", clip(strings.TrimSpace(t)))
		return true
	}
	*pending = append(*pending, got...)
	return true
}

// assignmentName reports whether the word at p.i starts with NAME=, a
// backslash-newline anywhere in it removed first as sh does, and if so
// moves past the '='.
func (p *parser) assignmentName() (string, bool) {
	var sb strings.Builder
	i, lines := p.i, 0
	for ; i < len(p.s) && p.s[i] != '='; i++ {
		if strings.HasPrefix(p.s[i:], "\\\n") {
			i++
			lines++
			continue
		}
		if c := p.s[i]; !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", false
		}
		sb.WriteByte(p.s[i])
	}
	if i >= len(p.s) || !ValidName(sb.String()) {
		return "", false
	}
	p.i, p.line = i+1, p.line+lines
	return sb.String(), true
}

// word reads one shell word at p.i: unquoted text up to a blank or an
// operator, with '...' and "..." parts and backslash escapes.
func (p *parser) word() (string, bool) {
	var sb strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || strings.IndexByte(";&|<>()", c) >= 0:
			return sb.String(), true
		case c == '\\':
			p.next()
			if e, ok := p.next(); !ok {
				sb.WriteByte('\\') // a backslash at the end of the file stays
			} else if e != '\n' {
				sb.WriteByte(e)
			}
		case c == '\'':
			p.next()
			end := strings.IndexByte(p.s[p.i:], '\'')
			if end < 0 {
				return "", false
			}
			sb.WriteString(p.s[p.i : p.i+end])
			p.line += strings.Count(p.s[p.i:p.i+end], "\n")
			p.i += end + 1
		case c == '"':
			p.next()
			closed := false
			for !closed {
				d, ok := p.next()
				if !ok {
					return "", false
				}
				switch {
				case d == '"':
					closed = true
				case d == '\\' && p.i < len(p.s) && strings.IndexByte("\"\\`$\n", p.s[p.i]) >= 0:
					if e, _ := p.next(); e != '\n' {
						sb.WriteByte(e)
					}
				default:
					sb.WriteByte(d)
				}
			}
		default:
			sb.WriteByte(c)
			p.next()
		}
	}
	return sb.String(), true
}

func (p *parser) skipBlanks() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	// A backslash-newline between words joins the lines.
	if strings.HasPrefix(p.s[p.i:], "\\\n") {
		p.next()
		p.next()
		p.skipBlanks()
	}
}

// skipComment moves to the end of the line, before its newline.
func (p *parser) skipComment() {
	if i := strings.IndexByte(p.s[p.i:], '\n'); i >= 0 {
		p.i += i
	} else {
		p.i = len(p.s)
	}
}

// clip cuts s so that a problem stays one readable line.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
