// Package hosts parses /etc/hosts as glibc and Go's resolver read it: one
// address and its names per line, '#' starting a comment, and lines with a
// bad address or no names skipped (and reported, so a check can point at
// them). guestcheck's hostname and dns checks share this one reading.
package hosts

import (
	"bytes"
	"net/netip"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Entry is one usable line of /etc/hosts.
type Entry struct {
	// Line is the 1-based line number, for messages that point at it.
	Line int
	// Addr is the address; IPv6 may carry a zone ("fe80::1%eth0").
	Addr netip.Addr
	// Names are the canonical name and aliases, as written.
	Names []string
}

// LineError is one /etc/hosts line that resolvers skip: the shared
// problem (its Line, 1-based, and Msg, e.g. `invalid address
// "127.0.1.l"`; no file name, so it reads "line N: why") and the line's
// words.
type LineError struct {
	problem.Problem
	// Fields are the line's words without the comment, so that callers
	// can tell whether a broken line was meant for a given name.
	Fields []string
}

// Error collects the lines of /etc/hosts that were skipped. Parsing
// goes on past them, as glibc and Go's resolver do.
type Error struct {
	Problems []LineError // in file order
}

// Error lists every skipped line on one line.
func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Error()
	}
	return strings.Join(parts, "; ")
}

// Parse parses /etc/hosts. It returns every usable entry; when some
// lines are unusable (bad address, address without names) it also returns
// a *Error listing them, so the entries stay usable either way.
func Parse(b []byte) ([]Entry, error) {
	var entries []Entry
	var problems []LineError
	for i, raw := range bytes.Split(b, []byte("\n")) {
		line := string(raw)
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		addr, err := netip.ParseAddr(f[0])
		switch {
		case err != nil:
			problems = append(problems, LineError{problem.At("", i+1, "invalid address %q", f[0]), f})
		case len(f) == 1:
			problems = append(problems, LineError{problem.At("", i+1, "address %s has no names", f[0]), f})
		default:
			entries = append(entries, Entry{Line: i + 1, Addr: addr, Names: f[1:]})
		}
	}
	if len(problems) > 0 {
		return entries, &Error{Problems: problems}
	}
	return entries, nil
}

// Lookup returns the entries that list name, in file order, matching
// case-insensitively and ignoring a trailing dot as resolvers do.
func Lookup(entries []Entry, name string) []Entry {
	want := normalize(name)
	if want == "" {
		return nil
	}
	var out []Entry
	for _, e := range entries {
		for _, n := range e.Names {
			if normalize(n) == want {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// normalize is how resolvers compare names: case-insensitive, without a
// trailing dot.
func normalize(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}
