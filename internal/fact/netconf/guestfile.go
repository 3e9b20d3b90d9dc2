package netconf

import (
	"github.com/guestcheck/guestcheck/internal/parse/ifcfg"
	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/nmconn"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// UnitOf hands a unit parsed by ParseUnit to the networkd reader.
func UnitOf(f INI) networkd.Unit {
	u := networkd.Unit{File: f.File, Entries: make([]networkd.Entry, len(f.Entries))}
	for i, e := range f.Entries {
		u.Entries[i] = networkd.Entry(e)
	}
	return u
}

// KeyfileOf hands a keyfile parsed by ParseKeyfile to the NetworkManager
// reader.
func KeyfileOf(f INI) nmconn.Keyfile {
	k := nmconn.Keyfile{File: f.File, Entries: make([]nmconn.Entry, len(f.Entries))}
	for i, e := range f.Entries {
		k.Entries[i] = nmconn.Entry(e)
	}
	return k
}

// IfcfgOf hands the variables of an ifcfg file to the ifcfg reader.
func IfcfgOf(file string, vars map[string]IfcfgVar) (ifcfg.Iface, []problem.Problem, bool) {
	vs := make(map[string]ifcfg.Var, len(vars))
	for k, v := range vars {
		vs[k] = ifcfg.Var(v)
	}
	i, probs, ok := ifcfg.Parse(file, vs)
	return i, FromParser(probs), ok
}
