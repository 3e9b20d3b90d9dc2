package netcheck

import (
	"github.com/guestcheck/guestcheck/internal/guestfile/envfile"
	"github.com/guestcheck/guestcheck/internal/guestfile/ini"
)

// INI and INIEntry name guestfile/ini's parsed file and assignment for the
// semantic layers here (networkd, NetworkManager, ifupdown) that take them.
type (
	INI      = ini.File
	INIEntry = ini.Entry
)

// IfcfgVar is one variable of an ifcfg file, as guestfile/envfile reads it.
type IfcfgVar = envfile.Var

// parseUnit parses a systemd-networkd unit, drop-in or networkd.conf.
func parseUnit(name string, b []byte) (INI, []Problem) {
	f, ps := ini.Parse(name, b, ini.Systemd)
	return f, fromParser(ps)
}

// parseKeyfile parses a NetworkManager keyfile, a GLib key file.
func parseKeyfile(name string, b []byte) (INI, []Problem) {
	f, ps := ini.Parse(name, b, ini.GLib)
	return f, fromParser(ps)
}

// parseIfcfg parses a Red Hat or SUSE ifcfg file as the network scripts
// source it.
func parseIfcfg(name string, b []byte) (map[string]IfcfgVar, []Problem) {
	vars, ps := envfile.Parse(name, b, envfile.Shell)
	return vars, fromParser(ps)
}

// fromParser converts a guestfile parser's problems, which carry the same
// file, line and message.
func fromParser[P ~struct {
	File string
	Line int
	Msg  string
}](ps []P) []Problem {
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = Problem(p)
	}
	return out
}
