package networkconfig

import (
	"slices"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
)

// TestIntentOfFacts takes the intent from Facts values, without a
// filesystem: which stack wins, and which unreadable files are reported.
func TestIntentOfFacts(t *testing.T) {
	read := func(p string) netconf.Read { return netconf.Read{Path: p, Name: p, OK: true} }
	np := func(p, y string) netconf.NetplanFile {
		f, probs := netplan.Parse(p, []byte(y))
		return netconf.NetplanFile{Read: read(p), File: f, Problems: netconf.FromParser(probs)}
	}
	nm := func(p, id string) netconf.Unit {
		ini, probs := netconf.ParseKeyfile(p, []byte("[connection]\nid="+id+"\ntype=ethernet\ninterface-name="+id+"\n"))
		return netconf.Unit{Read: read(p), INI: ini, Problems: probs}
	}
	locked := netconf.Unit{Read: netconf.Read{Path: "/etc/NetworkManager/system-connections/b.nmconnection",
		Name: "b.nmconnection", Unreadable: []string{"b.nmconnection: permission denied"}}}

	cases := []struct {
		name       string
		f          netconf.Facts
		source     string
		ifaces     []string
		unreadable []string
	}{
		{"cloud-init's netplan wins over NetworkManager",
			netconf.Facts{Netplan: []netconf.NetplanFile{np(ciNetplan, "network: {ethernets: {eth0: {dhcp4: true}}}\n")},
				NM: []netconf.Unit{nm("/etc/NetworkManager/system-connections/a.nmconnection", "eth1"), locked}},
			"netplan, rendered by cloud-init", []string{"eth0"}, nil},
		{"the administrator's NetworkManager, one file locked",
			netconf.Facts{NM: []netconf.Unit{nm("/etc/NetworkManager/system-connections/a.nmconnection", "eth1"), locked}},
			"NetworkManager (administrator)", []string{"eth1"}, []string{"b.nmconnection: permission denied"}},
		{"netplan's own NetworkManager output is left out",
			netconf.Facts{NM: []netconf.Unit{nm("/run/NetworkManager/system-connections/netplan-eth0.nmconnection", "eth0")}},
			"", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := IntentOf(tc.f)
			var ifaces []string
			for _, d := range r.Intent.Ifaces {
				ifaces = append(ifaces, d.Label())
			}
			if r.Intent.Source != tc.source || !slices.Equal(ifaces, tc.ifaces) || !slices.Equal(r.Unreadable, tc.unreadable) {
				t.Errorf("got %q %v unreadable %v, want %q %v %v", r.Intent.Source, ifaces, r.Unreadable, tc.source, tc.ifaces, tc.unreadable)
			}
			if r.Found != (tc.ifaces != nil) {
				t.Errorf("Found = %v", r.Found)
			}
		})
	}
}
