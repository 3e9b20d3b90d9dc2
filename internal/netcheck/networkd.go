package netcheck

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/guestfile/networkd"
)

// unitOf hands a unit parsed by ParseINI to the networkd reader.
func unitOf(f INI) networkd.Unit {
	u := networkd.Unit{File: f.File, Entries: make([]networkd.Entry, len(f.Entries))}
	for i, e := range f.Entries {
		u.Entries[i] = networkd.Entry(e)
	}
	return u
}

func networkdProblems(ps []networkd.Problem) []Problem {
	return problemsOf(ps, func(p networkd.Problem) Problem { return Problem(p) })
}

// matchLabel names the interfaces a [Match] is about, for messages.
func matchLabel(m networkd.Match) string { return strings.Join(m.Names, " ") }
