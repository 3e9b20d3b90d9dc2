package examples

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// token is a shell word (quotes removed) or an operator.
type token struct {
	text string
	op   bool
}

// tokens splits a POSIX shell line into words and operators: quotes and
// backslashes as sh reads them, a "#" at the start of a word ends the
// line. Expansions ($x, $(...)) stay as they are written.
func tokens(line string) []token {
	var out []token
	var w strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			out = append(out, token{text: w.String()})
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			w.WriteByte(line[i])
		case c == '#' && !inWord:
			flush()
			return out
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("|&;<>()", c) >= 0:
			// 2>&1 and friends: a digit right before a redirection is
			// part of the operator.
			if inWord && (c == '>' || c == '<') && isDigits(w.String()) {
				w.Reset()
				inWord = false
			}
			flush()
			j := i + 1
			for j < len(line) && strings.IndexByte("|&<>", line[j]) >= 0 {
				j++
			}
			// >&2, 2>&1: the descriptor belongs to the operator.
			if (c == '>' || c == '<') && line[j-1] == '&' {
				for j < len(line) && strings.IndexByte("0123456789-", line[j]) >= 0 {
					j++
				}
			}
			out = append(out, token{text: line[i:j], op: true})
			i = j - 1
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	flush()
	return out
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// SplitLine returns the simple commands of one shell line, each with the
// whole line as Line. Leading variable assignments and a sudo (with its
// options) are not the command: `sudo -n /usr/bin/guestcheck` is
// guestcheck. Redirection targets are not arguments.
func SplitLine(line string) []Command {
	var out []Command
	var cur *Command
	start := true
	toks := tokens(line)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.op && (strings.HasPrefix(t.text, ">") || strings.HasPrefix(t.text, "<")):
			if !strings.HasSuffix(strings.TrimRight(t.text, "0123456789-"), "&") || t.text == "&>" {
				i++ // the file name
			}
		case t.op:
			start, cur = true, nil
		case start && (assignment.MatchString(t.text) || t.text == "sudo" || path.Base(t.text) == "sudo"):
			// Skip sudo's own options too.
			for t.text == "sudo" || path.Base(t.text) == "sudo" {
				if i+1 < len(toks) && strings.HasPrefix(toks[i+1].text, "-") {
					i++
					continue
				}
				break
			}
		case start:
			out = append(out, Command{Line: line, Path: t.text, Tool: path.Base(t.text)})
			cur, start = &out[len(out)-1], false
		default:
			cur.Args = append(cur.Args, t.text)
		}
	}
	return out
}

// firstTool is the program of a line's first simple command.
func firstTool(line string) string {
	if c := SplitLine(line); len(c) > 0 {
		return c[0].Tool
	}
	return ""
}

func isTool(tool string, names ...string) bool {
	for _, n := range names {
		if tool == n {
			return true
		}
	}
	return false
}

var (
	span = regexp.MustCompile("`([^`]+)`")
	// nrpe is an nrpe.cfg command definition around a command line.
	nrpe = regexp.MustCompile(`^command\[[\w-]+\]=(.*)$`)
	// hclString is an HCL attribute whose string is a command line.
	hclString = regexp.MustCompile(`^\w+ = "(.*)"$`)
	// commandSpan starts a command line of Tools.
	commandSpan = regexp.MustCompile(`^((/usr/bin/)?sudo (-\w+ )*)?(/usr/s?bin/)?(guestcheck|sealprep|make)( |$)`)
	// metavar is a placeholder of a synopsis: FILE, [OPTIONS], <uuid>.
	metavar = regexp.MustCompile(`^[A-Z][A-Z_]+$|[\[<]`)
)

// Spans returns the command lines of guestcheck, sealprep and make in the inline code of the
// Markdown text of file (outside fenced blocks): complete commands only,
// not synopses with placeholders (`guestcheck explain CODE`). A span
// across lines is joined with one space.
func Spans(file, text string) []Command {
	var out []Command
	prose := Prose(text)
	for _, m := range span.FindAllStringSubmatchIndex(prose, -1) {
		s := strings.Join(strings.Fields(prose[m[2]:m[3]]), " ")
		if n := nrpe.FindStringSubmatch(s); n != nil {
			s = n[1]
		} else if h := hclString.FindStringSubmatch(s); h != nil {
			s = strings.ReplaceAll(h[1], `\"`, `"`)
		}
		cmds := SplitLine(s)
		if !commandSpan.MatchString(s) || len(cmds) == 0 || hasMetavar(cmds[0].Args) {
			continue
		}
		line := strings.Count(prose[:m[0]], "\n") + 1
		c := cmds[0]
		c.Where = fmt.Sprintf("%s:%d", file, line)
		out = append(out, c)
	}
	return out
}

func hasMetavar(args []string) bool {
	for _, a := range args {
		if metavar.MatchString(a) {
			return true
		}
	}
	return false
}
