package networkconfig

import (
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/parse/dhcplease"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Lease is what a DHCP client recorded for one interface.
type Lease struct {
	File    string
	Address netip.Addr
	Routers []netip.Addr
	DNS     []netip.Addr
}

// ParseEnvLease reads systemd-networkd's lease file format
// (/run/systemd/netif/leases/<ifindex>), which NetworkManager's internal
// client also writes, through the one lease parser (parse/dhcplease)
// that guestid reads client identifiers with.
func ParseEnvLease(name string, b []byte) (Lease, []problem.Problem) {
	sd, probs := dhcplease.ParseSDLease(name, b)
	l := Lease{File: name, Routers: sd.Routers, DNS: sd.DNS}
	l.Address, _ = netip.ParseAddr(sd.Address)
	return l, probs
}

// ParseDhclientLeases reads ISC dhclient's lease database through the one
// lease parser and returns the lease in force for iface (dhcplease's
// Last); ok is false when the file holds none for it.
func ParseDhclientLeases(name string, b []byte, iface string) (Lease, bool) {
	d, _ := dhcplease.ParseDhclient(name, b)
	l, ok := d.Last(iface)
	if !ok {
		return Lease{}, false
	}
	return Lease{File: name, Address: l.Address, Routers: l.Routers, DNS: l.DNS}, true
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
