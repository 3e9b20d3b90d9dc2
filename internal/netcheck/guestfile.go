package netcheck

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/guestfile/networkd"
	"github.com/guestcheck/guestcheck/internal/guestfile/nmconn"
)

// unitOf hands a unit parsed by parseUnit to the networkd reader.
func unitOf(f INI) networkd.Unit {
	u := networkd.Unit{File: f.File, Entries: make([]networkd.Entry, len(f.Entries))}
	for i, e := range f.Entries {
		u.Entries[i] = networkd.Entry(e)
	}
	return u
}

// keyfileOf hands a keyfile parsed by parseKeyfile to the NetworkManager
// reader.
func keyfileOf(f INI) nmconn.Keyfile {
	k := nmconn.Keyfile{File: f.File, Entries: make([]nmconn.Entry, len(f.Entries))}
	for i, e := range f.Entries {
		k.Entries[i] = nmconn.Entry(e)
	}
	return k
}

// matchLabel names the interfaces a [Match] is about, for messages.
func matchLabel(m networkd.Match) string { return strings.Join(m.Names, " ") }
