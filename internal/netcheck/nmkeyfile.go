package netcheck

import "github.com/guestcheck/guestcheck/internal/guestfile/nmconn"

// keyfileOf hands a keyfile parsed by ParseINI to the NetworkManager
// reader.
func keyfileOf(f INI) nmconn.Keyfile {
	k := nmconn.Keyfile{File: f.File, Entries: make([]nmconn.Entry, len(f.Entries))}
	for i, e := range f.Entries {
		k.Entries[i] = nmconn.Entry{Group: e.Section, Key: e.Key, Value: e.Value, Line: e.Line}
	}
	return k
}

func nmProblems(ps []nmconn.Problem) []Problem {
	return problemsOf(ps, func(p nmconn.Problem) Problem { return Problem(p) })
}
