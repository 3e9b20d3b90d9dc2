package netconf

import (
	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/parse/ini"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// INI and INIEntry name guestfile/ini's parsed file and assignment for the
// semantic layers here (networkd, NetworkManager, ifupdown) that take them.
type (
	INI      = ini.File
	INIEntry = ini.Entry
)

// IfcfgVar is one variable of an ifcfg file, as guestfile/envfile reads it.
type IfcfgVar = envfile.Var

// ParseUnit parses a systemd-networkd unit, drop-in or networkd.conf.
func ParseUnit(name string, b []byte) (INI, []problem.Problem) {
	f, ps := ini.Parse(name, b, ini.Systemd)
	return f, FromParser(ps)
}

// ParseKeyfile parses a NetworkManager keyfile, a GLib key file.
func ParseKeyfile(name string, b []byte) (INI, []problem.Problem) {
	f, ps := ini.Parse(name, b, ini.GLib)
	return f, FromParser(ps)
}

// ParseIfcfg parses a Red Hat or SUSE ifcfg file as the network scripts
// source it.
func ParseIfcfg(name string, b []byte) (map[string]IfcfgVar, []problem.Problem) {
	vars, ps := envfile.Parse(name, b, envfile.Shell)
	return vars, FromParser(ps)
}

// FromParser converts a guestfile parser's problems, which carry the same
// file, line and message.
func FromParser[P ~struct {
	File string
	Line int
	Msg  string
}](ps []P) []problem.Problem {
	out := make([]problem.Problem, len(ps))
	for i, p := range ps {
		out[i] = problem.Problem(p)
	}
	return out
}
