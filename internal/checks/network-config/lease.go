package netintent

import (
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Lease is what a DHCP client recorded for one interface.
type Lease struct {
	File    string
	Address netip.Addr
	Routers []netip.Addr
	DNS     []netip.Addr
}

// ParseEnvLease parses systemd-networkd's lease file format
// (/run/systemd/netif/leases/<ifindex>), which NetworkManager's internal
// client also writes: networkd writes and reads it with systemd's env-file
// code (guestfile/envfile's Systemd dialect), lists space-separated.
func ParseEnvLease(name string, b []byte) (Lease, []problem.Problem) {
	vars, probs := envfile.Parse(name, b, envfile.Systemd)
	l := Lease{File: name, Routers: addrWords(vars["ROUTER"].Value), DNS: addrWords(vars["DNS"].Value)}
	l.Address, _ = netip.ParseAddr(vars["ADDRESS"].Value)
	return l, netconf.FromParser(probs)
}

func addrWords(s string) []netip.Addr {
	var out []netip.Addr
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
		if a, err := netip.ParseAddr(w); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// ParseDhclientLeases parses ISC dhclient's lease database and returns
// the last lease recorded for iface (the one in force); ok is false
// when the file holds none for it.
func ParseDhclientLeases(name string, b []byte, iface string) (Lease, bool) {
	var cur, last Lease
	in, ifaceOK, found := false, false, false
	for _, line := range lines(b) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "lease") && strings.HasSuffix(t, "{"):
			cur, in, ifaceOK = Lease{File: name}, true, false
		case t == "}":
			if in && ifaceOK {
				last, found = cur, true
			}
			in = false
		case in:
			t = strings.TrimSuffix(t, ";")
			w := strings.Fields(t)
			switch {
			case len(w) == 2 && w[0] == "interface":
				ifaceOK = strings.Trim(w[1], `"`) == iface
			case len(w) == 2 && w[0] == "fixed-address":
				cur.Address, _ = netip.ParseAddr(w[1])
			case len(w) >= 3 && w[0] == "option" && w[1] == "routers":
				cur.Routers = addrWords(strings.Join(w[2:], " "))
			case len(w) >= 3 && w[0] == "option" && w[1] == "domain-name-servers":
				cur.DNS = addrWords(strings.Join(w[2:], " "))
			}
		}
	}
	return last, found
}

// readLeases finds the DHCP lease of each link: systemd-networkd's,
// NetworkManager's (internal client or dhclient) and ifupdown's dhclient.
func readLeases(root fs.Reader, links []netstate.Link) map[string]Lease {
	out := map[string]Lease{}
	nmDir := catalogue.Lookup(catalogue.NMLeases).Dirs()[0].Path
	networkdDir := catalogue.Lookup(catalogue.NetworkdLeases).Dirs()[0].Path
	dhclientDir := catalogue.Lookup(catalogue.DhclientLeases).Dirs()[0].Path
	nm, _ := root.ReadDir(nmDir)
	for _, l := range links {
		if strings.ContainsAny(l.Name, "/\x00") {
			continue
		}
		p := path.Join(networkdDir, strconv.Itoa(l.Index))
		if b, err := root.ReadFile(p); err == nil {
			if le, _ := ParseEnvLease(root.Display(p), b); le.Address.IsValid() {
				out[l.Name] = le
				continue
			}
		}
		for _, e := range nm {
			n := e.Name
			switch {
			case strings.HasPrefix(n, "internal-") && strings.HasSuffix(n, "-"+l.Name+".lease"):
				if b, err := root.ReadFile(path.Join(nmDir, n)); err == nil {
					if le, _ := ParseEnvLease(root.Display(path.Join(nmDir, n)), b); le.Address.IsValid() {
						out[l.Name] = le
					}
				}
			case strings.HasPrefix(n, "dhclient-") && strings.HasSuffix(n, "-"+l.Name+".lease"):
				if b, err := root.ReadFile(path.Join(nmDir, n)); err == nil {
					if le, ok := ParseDhclientLeases(root.Display(path.Join(nmDir, n)), b, l.Name); ok {
						out[l.Name] = le
					}
				}
			}
		}
		if _, ok := out[l.Name]; ok {
			continue
		}
		for _, p := range []string{path.Join(dhclientDir, "dhclient."+l.Name+".leases"), path.Join(dhclientDir, "dhclient.leases")} {
			if b, err := root.ReadFile(p); err == nil {
				if le, ok := ParseDhclientLeases(root.Display(p), b, l.Name); ok {
					out[l.Name] = le
					break
				}
			}
		}
	}
	return out
}

// lines splits b into lines without their terminators. A final line
// without a newline is kept.
func lines(b []byte) []string {
	s := strings.Split(string(b), "\n")
	if len(s) > 0 && s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	for i, l := range s {
		s[i] = strings.TrimSuffix(l, "\r")
	}
	return s
}
