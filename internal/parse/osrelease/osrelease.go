// Package osrelease parses os-release(5): newline-separated KEY=value
// assignments in a shell-compatible subset, with optional single or double
// quotes, backslash escapes inside double quotes, comments and blank lines.
package osrelease

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Paths are where os-release(5) says to look, in order: /etc/os-release,
// then /usr/lib/os-release when the first does not exist.
var Paths = []string{"/etc/os-release", "/usr/lib/os-release"}

// Release holds the assignments of one file.
type Release map[string]string

// Parse reads an os-release file. Bad lines are skipped, as systemd's
// parser skips them, and the first one is returned as a *problem.Problem
// (with its line, without a file name) along with
// everything that did parse, so a caller can judge with what is there and
// still report the line.
func Parse(b []byte) (Release, error) {
	r := Release{}
	var first error
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !validKey(k) {
			if first == nil {
				first = &problem.Problem{Line: i + 1, Msg: fmt.Sprintf("not a KEY=value assignment: %q", clip(line))}
			}
			continue
		}
		val, err := unquote(v)
		if err != nil {
			if first == nil {
				first = &problem.Problem{Line: i + 1, Msg: err.Error()}
			}
			continue
		}
		r[k] = val
	}
	return r, first
}

// ID returns the lower-case ID, and IDLike the space-separated ID_LIKE
// list; both are what scripts should branch on instead of NAME.
func (r Release) ID() string { return r["ID"] }

// IDLike returns the distributions ID_LIKE names, closest first.
func (r Release) IDLike() []string { return strings.Fields(r["ID_LIKE"]) }

// Like reports whether the release is id itself or declares itself like
// it in ID_LIKE.
func (r Release) Like(id string) bool {
	if r.ID() == id {
		return true
	}
	for _, l := range r.IDLike() {
		if l == id {
			return true
		}
	}
	return false
}

func validKey(k string) bool {
	if k == "" {
		return false
	}
	for i, c := range k {
		switch {
		case c >= 'A' && c <= 'Z', c == '_', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// unquote undoes the quoting os-release allows: one pair of single or
// double quotes around the whole value; inside double quotes a backslash
// escapes $, ", \ and `. An unquoted value may not contain shell
// metacharacters or spaces.
func unquote(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	switch v[0] {
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' || strings.ContainsRune(v[1:len(v)-1], '\'') {
			return "", fmt.Errorf("unterminated single quote in %q", clip(v))
		}
		return v[1 : len(v)-1], nil
	case '"':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			switch {
			case c == '\\' && i+1 < len(v) && strings.IndexByte("$\"\\`", v[i+1]) >= 0:
				b.WriteByte(v[i+1])
				i++
			case c == '"':
				if i != len(v)-1 {
					return "", fmt.Errorf("text after the closing quote in %q", clip(v))
				}
				return b.String(), nil
			case c == '$' || c == '`':
				return "", fmt.Errorf("unescaped %c inside double quotes in %q", c, clip(v))
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf("unterminated double quote in %q", clip(v))
	}
	if i := strings.IndexAny(v, " \t\"'`$\\;|&<>()"); i >= 0 {
		return "", fmt.Errorf("unquoted value with %q needs quotes: %q", v[i], clip(v))
	}
	return v, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
