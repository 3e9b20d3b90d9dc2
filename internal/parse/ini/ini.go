// Package ini parses the two INI dialects a guest carries, each the way
// its owning program reads it:
//
//   - Systemd: systemd.syntax(7), for units and their drop-ins,
//     systemd-networkd's .network, .netdev and .link files, networkd.conf
//     and timesyncd.conf. A line ending in an odd number of backslashes
//     continues on the next: the backslash becomes a space and the next
//     line is appended as written. Lines starting with '#' or ';' are
//     comments, also inside a continuation. Keys and values are trimmed.
//     An empty assignment resets a list, which List applies.
//   - GLib: GKeyFile, for NetworkManager .nmconnection keyfiles and
//     qemu-ga.conf. No continuation; only '#' starts a comment; "[group]"
//     may be followed by blanks only; keys lose trailing blanks and values
//     leading blanks only; Value is the raw text (g_key_file_get_value)
//     and Unescape decodes \s \n \t \r \\ as g_key_file_get_string does.
//
// In both dialects entries keep file order with repeats, so that the last
// assignment of a key wins (Get) and repeated sections ([Route],
// [Address]) stay apart by their header line. Lines neither program
// accepts are problems "FILE:LINE: what"; the rest of the file is still
// read, though GLib refuses the whole file on the first one and systemd
// refuses a unit whose section header is malformed. Parsing is pure.
package ini

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Dialect selects whose rules apply.
type Dialect int

const (
	// Systemd is systemd's unit-file syntax.
	Systemd Dialect = iota
	// GLib is GLib's key-file format.
	GLib
)

// Entry is one key=value assignment.
type Entry struct {
	Section string
	Key     string
	// Value is trimmed (systemd) or left-trimmed and still escaped (GLib).
	Value string
	// Line is where the assignment starts (its first line when continued).
	Line int
	// SectionLine is the line of the [section] header the entry follows,
	// which tells repeated sections ([Route], [Address]) apart.
	SectionLine int
}

// File is one parsed file. Entries keep file order; repeated keys are kept.
type File struct {
	// File is the name shown to the operator in problems and findings.
	File    string
	Entries []Entry
}

// Parse parses b, shown to the operator as name, in dialect d. Its
// problems are the lines the owning program rejects or ignores.
func Parse(name string, b []byte, d Dialect) (File, []problem.Problem) {
	p := parser{f: File{File: name}}
	ls := splitLines(b)
	if d == GLib {
		for i, l := range ls {
			p.glibLine(i+1, l)
		}
		return p.f, p.probs
	}
	if len(ls) > 0 {
		ls[0] = strings.TrimPrefix(ls[0], "\uFEFF") // systemd skips a UTF-8 byte order mark
	}
	cont, start := "", 0 // a pending continuation and its first line
	for i, l := range ls {
		n := i + 1
		if why := binary(l); why != "" {
			p.bad(n, "line "+why)
			continue
		}
		if t := strings.TrimLeft(l, sdSpace); t != "" && (t[0] == '#' || t[0] == ';') {
			continue // comments do not end, nor take part in, a continuation
		}
		if cont == "" {
			start = n
		}
		l = cont + l
		if trailingEscape(l) {
			cont = l[:len(l)-1] + " "
			continue
		}
		cont = ""
		p.systemdLine(start, l)
	}
	if cont != "" {
		p.systemdLine(start, cont)
	}
	return p.f, p.probs
}

type parser struct {
	f           File
	probs       []problem.Problem
	section     string
	sectionLine int
}

func (p *parser) bad(n int, msg string) {
	p.probs = append(p.probs, problem.Problem{File: p.f.File, Line: n, Msg: msg})
}

func (p *parser) add(n int, k, v string) {
	p.f.Entries = append(p.f.Entries, Entry{Section: p.section, Key: k, Value: v, Line: n, SectionLine: p.sectionLine})
}

// sdSpace is systemd's WHITESPACE.
const sdSpace = " \t\n\r"

// systemdLine handles one logical line as systemd's parse_line does.
func (p *parser) systemdLine(n int, l string) {
	t := strings.Trim(l, sdSpace)
	if t == "" {
		return
	}
	if t[0] == '[' {
		if len(t) < 3 || t[len(t)-1] != ']' {
			p.bad(n, "malformed section header "+quote(t))
			p.section = ""
			return
		}
		p.section, p.sectionLine = t[1:len(t)-1], n
		return
	}
	k, v, ok := strings.Cut(t, "=")
	k = strings.Trim(k, sdSpace)
	if !ok || k == "" || strings.ContainsAny(k, sdSpace) {
		p.bad(n, "expected key=value, got "+quote(t))
		return
	}
	if p.section == "" {
		p.bad(n, "key "+quote(k)+" outside any [section]")
		return
	}
	p.add(n, k, strings.Trim(v, sdSpace))
}

// trailingEscape reports whether l ends in an unescaped backslash.
func trailingEscape(l string) bool {
	n := 0
	for n < len(l) && l[len(l)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// glibSpace is g_ascii_isspace.
const glibSpace = " \t\n\v\f\r"

// glibLine handles one line as g_key_file_parse_line does.
func (p *parser) glibLine(n int, l string) {
	if why := binary(l); why != "" {
		p.bad(n, "line "+why)
		return
	}
	t := strings.TrimLeft(l, glibSpace)
	if t == "" || t[0] == '#' {
		return
	}
	if t[0] == '[' {
		end := strings.IndexByte(t, ']')
		if end < 0 || strings.Trim(t[end+1:], " \t") != "" {
			p.bad(n, "malformed group header "+quote(t))
			p.section = ""
			return
		}
		g := t[1:end]
		if g == "" || strings.ContainsFunc(g, func(r rune) bool { return r == '[' || r < 0x20 || r == 0x7f }) {
			p.bad(n, "invalid group name "+quote(g))
			p.section = ""
			return
		}
		p.section, p.sectionLine = g, n
		return
	}
	k, v, ok := strings.Cut(t, "=")
	if !ok || k == "" {
		p.bad(n, "expected key=value, got "+quote(t))
		return
	}
	if p.section == "" {
		p.bad(n, "key "+quote(strings.TrimRight(k, glibSpace))+" outside any [group]")
		return
	}
	k = strings.TrimRight(k, glibSpace)
	if !glibKey(k) {
		p.bad(n, "invalid key name "+quote(k))
		return
	}
	p.add(n, k, strings.TrimLeft(v, glibSpace))
}

// glibKey is g_key_file_is_key_name: no '[' or ']' but for one trailing
// locale suffix "[de_DE.UTF-8@euro]"; no blank at either end.
func glibKey(k string) bool {
	base, loc, hasLoc := strings.Cut(k, "[")
	if base == "" || strings.ContainsRune(base, ']') || base[0] == ' ' || k[len(k)-1] == ' ' {
		return false
	}
	if !hasLoc {
		return true
	}
	loc, ok := strings.CutSuffix(loc, "]")
	if !ok {
		return false
	}
	for _, r := range loc {
		if !(r == '-' || r == '_' || r == '.' || r == '@' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f) {
			return false
		}
	}
	return true
}

// Unescape decodes a GLib value as g_key_file_get_string does: \s \n \t
// \r and \\. Any other escape, or a backslash at the end, is an error;
// NetworkManager and qemu-ga then reject the setting.
func Unescape(raw string) (string, error) {
	if !strings.Contains(raw, `\`) {
		return raw, nil
	}
	var sb strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			sb.WriteByte(c)
			continue
		}
		i++
		if i == len(raw) {
			return "", fmt.Errorf("escape character at end of line")
		}
		switch raw[i] {
		case 's':
			sb.WriteByte(' ')
		case 'n':
			sb.WriteByte('\n')
		case 't':
			sb.WriteByte('\t')
		case 'r':
			sb.WriteByte('\r')
		case '\\':
			sb.WriteByte('\\')
		default:
			return "", fmt.Errorf("invalid escape sequence \\%c", raw[i])
		}
	}
	return sb.String(), nil
}

// Get returns the last assignment of key in section: the one that wins.
func (f File) Get(section, key string) (Entry, bool) {
	for i := len(f.Entries) - 1; i >= 0; i-- {
		if e := f.Entries[i]; e.Section == section && e.Key == key {
			return e, true
		}
	}
	return Entry{}, false
}

// All returns every assignment of key in section, in file order.
func (f File) All(section, key string) []Entry {
	var out []Entry
	for _, e := range f.Entries {
		if e.Section == section && e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

// List returns the assignments of a systemd list setting that are in
// force: those after the last empty assignment, which resets the list.
func (f File) List(section, key string) []Entry {
	all := f.All(section, key)
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Value == "" {
			return all[i+1:]
		}
	}
	return all
}

// splitLines splits b into lines without their terminators ("\n" or
// "\r\n"); a final line without a newline is kept.
func splitLines(b []byte) []string {
	s := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i := range s {
		s[i] = strings.TrimSuffix(s[i], "\r")
	}
	return s
}

// binary reports why a line cannot be text: a NUL byte or invalid UTF-8,
// which in a configuration file means corruption, not content.
func binary(l string) string {
	switch {
	case strings.IndexByte(l, 0) >= 0:
		return "contains a NUL byte"
	case !utf8.ValidString(l):
		return "is not valid UTF-8"
	}
	return ""
}

// quote quotes s for a message, cut so that a problem stays one line.
func quote(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q...", s[:60])
	}
	return fmt.Sprintf("%q", s)
}
