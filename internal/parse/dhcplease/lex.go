package dhcplease

import (
	"strconv"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// token is one lexical element of a dhclient lease file: a word ('w'), a
// quoted string with its escapes decoded ('s'), or one of ; { }.
type token struct {
	kind byte
	text string
	line int
}

func (t token) punct() bool { return t.kind == ';' || t.kind == '{' || t.kind == '}' }

func quoteTok(t token) string {
	if t.kind == 's' {
		return strconv.Quote(t.text)
	}
	return t.text
}

// lex splits b into tokens as dhclient's own lexer does: white space
// separates, '#' starts a comment to the end of the line, strings are
// double-quoted with C escapes (dhclient writes unprintable bytes as
// \ooo octal). An unterminated string ends the input with a problem.
func lex(name string, b []byte) ([]token, []problem.Problem) {
	var toks []token
	line := 1
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == ';' || c == '{' || c == '}':
			toks = append(toks, token{kind: c, text: string(c), line: line})
			i++
		case c == '"':
			s, n, lines, ok := lexString(b[i+1:])
			if !ok {
				return toks, []problem.Problem{problem.At(name, line, "string is not terminated")}
			}
			toks = append(toks, token{kind: 's', text: s, line: line})
			line += lines
			i += 1 + n
		default:
			j := i
			for j < len(b) && !isSep(b[j]) {
				j++
			}
			toks = append(toks, token{kind: 'w', text: string(b[i:j]), line: line})
			i = j
		}
	}
	return toks, nil
}

func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\f', '\v', '\n', '#', ';', '{', '}', '"':
		return true
	}
	return false
}

// lexString decodes a string after its opening quote and returns it, the
// bytes consumed (closing quote included) and the newlines inside it.
func lexString(b []byte) (s string, n, lines int, ok bool) {
	var out []byte
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case '"':
			return string(out), i + 1, lines, true
		case '\n':
			lines++
			out = append(out, c)
		case '\\':
			if i+1 >= len(b) {
				return "", 0, 0, false
			}
			v, used := unescape(b[i+1:])
			if b[i+1] == '\n' {
				lines++
			}
			out = append(out, v)
			i += used
		default:
			out = append(out, c)
		}
	}
	return "", 0, 0, false
}

// unescape decodes the escape after a backslash: up to three octal
// digits, \t \r \n, or the character itself (\" and \\).
func unescape(b []byte) (byte, int) {
	if b[0] >= '0' && b[0] <= '7' {
		v, n := 0, 0
		for n < 3 && n < len(b) && b[n] >= '0' && b[n] <= '7' {
			v = v*8 + int(b[n]-'0')
			n++
		}
		return byte(v), n
	}
	switch b[0] {
	case 't':
		return '\t', 1
	case 'r':
		return '\r', 1
	case 'n':
		return '\n', 1
	}
	return b[0], 1
}
