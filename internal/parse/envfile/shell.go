package envfile

import (
	"strings"
	"unicode/utf8"
)

// shell reads the file as bash sources it: one line (a list of simple
// commands) at a time, so that a syntax error anywhere on a line keeps all
// of it from running and stops the file there.
func (p *parser) shell() {
	var pending []Assignment // the current line's, set when it ends
	commit := func() {
		for _, a := range pending {
			p.vars[a.Name] = Var{Value: a.Value, Line: a.Line}
		}
		p.all = append(p.all, pending...)
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

// command reads one simple command, "[export] NAME=word...", up to a
// newline, ';' or comment, and adds its assignments to pending. A command
// word makes the assignments before it apply to that command only, so
// they are dropped. It returns false on a syntax error.
func (p *parser) command(pending *[]Assignment) bool {
	start, from := p.line, p.i
	var got []Assignment
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
		line, wordStart := p.line, p.i
		name, isAsg := "", false
		if !cmd && !export {
			name, isAsg = p.assignmentName()
		}
		w, ok := p.word()
		if !ok {
			p.bad(line, "unterminated quote, and sh stops reading the file here")
			return false
		}
		asg := Assignment{Line: line, Start: wordStart, End: p.i, CmdStart: from}
		switch {
		case isAsg:
			asg.Name, asg.Value = name, w
			got = append(got, asg)
		case n == 0 && w == "export":
			export = true
		case export:
			// export's arguments are words after quote removal: NAME=value
			// sets, NAME alone sets nothing.
			if k, v, ok := strings.Cut(w, "="); ok && ValidName(k) {
				asg.Name, asg.Value = k, v
				got = append(got, asg)
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
	for i := range got {
		got[i].CmdEnd = p.i
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
