// Package fstab parses /etc/fstab (fstab(5)) the way libmount reads it,
// and says what an entry's fs_spec names: a tag, a udev link, a kernel
// device name, a file, a network share or a virtual filesystem. It also
// holds the octal escapes fstab, mtab, mountinfo and /proc/swaps share.
// Everything here is pure: bytes in, values out.
package fstab

import (
	"fmt"
	"math"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Entry is one mount line of /etc/fstab (fstab(5)), as libmount reads it.
type Entry struct {
	// Line is the 1-based line number in the file, for findings.
	Line int
	// Spec is fs_spec with octal escapes decoded: "UUID=…", "/dev/vdb", "host:/export".
	Spec string
	// MountPoint is fs_file with escapes decoded; "none" or "swap" for swap.
	// libmount takes it as written: it may be relative, the check judges that.
	MountPoint string
	// Type is fs_vfstype ("ext4", "swap", "nfs", "auto"), escapes decoded.
	Type string
	// Options is fs_mntops split at commas outside double quotes; nil when
	// the line has only three fields, which mount reads as "defaults".
	Options []string
	// Freq and PassNo are fields 5 and 6; 0 when absent. libmount reads
	// them as C ints, so they may be negative.
	Freq, PassNo int
	// Fields is how many fields libmount read (3 to 6).
	Fields int
	// Trailing is the text after the sixth field, as written, that mount
	// and systemd ignore (often a comment); empty when there is none.
	Trailing string
	// CutAtNUL is set when the last line, without a final newline, holds a
	// NUL byte: libmount reads the line only up to it and so does Parse.
	CutAtNUL bool
}

// Parse parses fstab bytes the way libmount (mount, findmnt,
// systemd-fstab-generator) does, so that an entry here is an entry there
// and a bad line here is a line they skip; the differential test against
// findmnt holds it to that. Lines end at '\n' and one '\r' before it is
// dropped; blank lines and lines whose first non-blank character is '#' are
// skipped; fields are separated by spaces and tabs and carry \040-style
// octal escapes. Three fields are enough (options default to "defaults",
// dump and pass to 0), text after the sixth field is ignored (and kept in
// Trailing), dump and pass are read as C's strtol reads them. A line
// holding a NUL byte is an error, except on a last line without a final
// newline, which libmount reads up to the NUL. Lines that cannot be parsed
// are returned as Problems (LineText gives their text) and parsing
// continues.
func Parse(b []byte) ([]Entry, []problem.Problem) {
	var entries []Entry
	var errs []problem.Problem
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		n := i + 1
		terminated := i < len(lines)-1
		cut := false
		if j := strings.IndexByte(line, 0); j >= 0 {
			if terminated {
				// getline's line then holds a NUL before its '\n': libmount
				// finds no end of line and rejects it, comment or not.
				errs = append(errs, problem.Problem{Line: n, Msg: "contains a NUL byte, so mount skips the whole line"})
				continue
			}
			line, cut = line[:j], true
		}
		line = strings.TrimSuffix(line, "\r")
		e, reason, ok := parseLine(line)
		if reason != "" {
			errs = append(errs, problem.Problem{Line: n, Msg: reason})
			continue
		}
		if !ok {
			continue // blank or comment
		}
		e.Line, e.CutAtNUL = n, cut
		entries = append(entries, e)
	}
	return entries, errs
}

// parseLine parses one line without its end of line. It returns ok
// false and no reason for a blank or comment line.
func parseLine(line string) (e Entry, reason string, ok bool) {
	s := skipBlanks(line)
	if s == "" || s[0] == '#' {
		return e, "", false
	}
	var f [4]string
	for k := range f {
		f[k], s = nextField(s)
		if f[k] == "" {
			break
		}
		e.Fields++
	}
	if e.Fields < 3 {
		return e, fmt.Sprintf("has %d field%s, want at least 3 (device, mount point, type[, options[, dump[, pass]]])",
			e.Fields, map[bool]string{true: "s"}[e.Fields != 1]), false
	}
	e.Spec, e.MountPoint, e.Type = Unescape(f[0]), Unescape(f[1]), Unescape(f[2])
	if e.Fields == 3 {
		return e, "", true
	}
	e.Options = SplitOptions(Unescape(f[3]))
	for k, dst := range []*int{&e.Freq, &e.PassNo} {
		if s == "" {
			return e, "", true
		}
		v, rest, ok := strtolField(s)
		if !ok {
			word, _ := nextField(s)
			want := "want a number"
			if strings.Trim(word, "+-0123456789") == "" && strings.ContainsAny(word, "0123456789") {
				want = "which is out of range"
			}
			return e, fmt.Sprintf("field %d (%s) is %q, %s", 5+k, []string{"dump", "pass"}[k], word, want), false
		}
		*dst = v
		e.Fields++
		s = skipBlanks(rest)
	}
	e.Trailing = s
	return e, "", true
}

// skipBlanks drops leading spaces and tabs, libmount's only separators.
func skipBlanks(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

// nextField returns the field at the start of s (which starts with no
// blank) and what follows it with its leading blanks dropped.
func nextField(s string) (field, rest string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], skipBlanks(s[i:])
}

// strtolField reads a dump or pass number at the start of s as libmount
// does with strtol(s, &end, 10) stored in an int: leading C white space
// and a sign are accepted, the number must end at a blank or at the end of
// the line, and an out-of-range number is accepted (clamped to the range
// of a C long, then cut to 32 bits) only when nothing follows it.
func strtolField(s string) (v int, rest string, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	overflow := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if u > (math.MaxUint64-d)/10 {
			overflow = true
		} else {
			u = u*10 + d
		}
	}
	if i == start {
		return 0, s, false // no digits: strtol consumes nothing
	}
	var l int64
	switch {
	case !neg && (overflow || u > math.MaxInt64):
		l, overflow = math.MaxInt64, true
	case neg && (overflow || u > 1<<63):
		l, overflow = math.MinInt64, true
	case neg:
		l = int64(-u)
	default:
		l = int64(u)
	}
	rest = s[i:]
	if rest != "" && (overflow || (rest[0] != ' ' && rest[0] != '\t')) {
		return 0, s, false
	}
	return int(int32(l)), rest, true
}

// Unescape decodes the octal escapes fstab, mtab and mountinfo use for
// blanks and backslashes (\040 space, \011 tab, \012 newline, \134
// backslash) as libmount does: a backslash and three octal digits is one
// byte, the value taken modulo 256 (\777 is 0xff); a backslash not
// followed by three octal digits is kept. An escape that decodes to NUL
// (\000, \400) ends the string there, as it ends libmount's C string, so
// that no field ever holds a NUL.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			v := (s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0') // wraps modulo 256
			if v == 0 {
				break
			}
			b.WriteByte(v)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// Escape is the inverse of Unescape for the characters that would break a
// field: blanks, newlines, backslashes and '#' (which would start a
// comment). It is used to print fstab lines.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\\', '#':
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// SplitOptions splits a mount option string at commas that are not inside
// double quotes (SELinux contexts such as context="a,b" contain commas).
func SplitOptions(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// Option reports whether the entry has option name (as "name" or
// "name=value") and its value.
func (e Entry) Option(name string) (string, bool) {
	for _, o := range e.Options {
		if o == name {
			return "", true
		}
		if v, ok := strings.CutPrefix(o, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// HasOption reports whether the entry has option name, with or without a value.
func (e Entry) HasOption(name string) bool {
	_, ok := e.Option(name)
	return ok
}

// IsSwap reports whether the entry is a swap area.
func (e Entry) IsSwap() bool { return e.Type == "swap" }

// String formats the entry as an fstab line, escaping what needs it. All six
// fields are written so that the line can be pasted as is.
func (e Entry) String() string {
	opts := strings.Join(e.Options, ",")
	if opts == "" {
		opts = "defaults"
	}
	return fmt.Sprintf("%s %s %s %s %d %d", escapeField(e.Spec), escapeField(e.MountPoint), escapeField(e.Type), Escape(opts), e.Freq, e.PassNo)
}

// escapeField escapes a field for an fstab line; an empty field (which
// only an escaped NUL can produce) is written back as \000 so that the
// line keeps its field count.
func escapeField(s string) string {
	if s == "" {
		return `\000`
	}
	return Escape(s)
}

// LineText returns line n (1-based) of fstab bytes b as Parse read it,
// for showing the line a Problem is about: without its end of line, a NUL
// byte shown as \000 (or, on a last line without a final newline, the
// line cut there as libmount cuts it). It is "" when b has no line n.
func LineText(b []byte, n int) string {
	lines := strings.Split(string(b), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	line := lines[n-1]
	if j := strings.IndexByte(line, 0); j >= 0 {
		if n < len(lines) {
			return strings.ReplaceAll(line, "\x00", `\000`)
		}
		line = line[:j]
	}
	return strings.TrimSuffix(line, "\r")
}
