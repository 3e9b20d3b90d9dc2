package netconf

import (
	"cmp"
	"fmt"
	"net"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/nmconn"
)

// MACBinding is network configuration that applies only to the NIC with
// one MAC address: a clone whose NIC has a new MAC does not match it.
type MACBinding struct {
	MAC  net.HardwareAddr
	At   string // "file:line"
	Kind string // what kind of binding, for messages
	Name string // the interface the configuration is for, when it says
	// Sets: the configuration gives the NIC this MAC (ifcfg MACADDR=,
	// NetworkManager cloned-mac-address, ifupdown hwaddress) rather than
	// matching it: every clone's NIC then takes the template's MAC.
	Sets bool
}

// MACBindings lists every entry of the guest's network configuration that
// is bound to one MAC address: networkd [Match] MACAddress= of .network
// and .link units, NetworkManager mac-address (and cloned-mac-address),
// ifcfg HWADDR= (and MACADDR=), ifupdown's hwaddress, udev's
// persistent-net rules and netplan's match macaddress (after netplan's
// merge), in that order. It is the one reader of MAC bindings:
// network-identity judges them against the NICs, and guestid reports
// them for comparison across VMs. Files that could not be read or parsed
// are left out; Facts says which.
func MACBindings(f Facts) []MACBinding {
	var out []MACBinding
	for _, u := range f.Networkd {
		if u.OK && !strings.HasSuffix(u.Path, ".netdev") {
			out = append(out, networkdBindings(u)...)
		}
	}
	for _, u := range f.NM {
		if !u.OK {
			continue
		}
		nm, _ := nmconn.Parse(KeyfileOf(u.INI))
		if nm.MAC != nil {
			out = append(out, MACBinding{MAC: nm.MAC.MAC, At: nm.MAC.At, Kind: "NetworkManager mac-address", Name: cmp.Or(nm.InterfaceName, nm.ID)})
		}
		if nm.ClonedMAC != nil {
			out = append(out, MACBinding{MAC: nm.ClonedMAC.MAC, At: nm.ClonedMAC.At, Kind: "NetworkManager cloned-mac-address", Name: cmp.Or(nm.InterfaceName, nm.ID), Sets: true})
		}
	}
	for _, i := range f.Ifcfg {
		if i.OK && i.IfaceOK && i.Iface.MAC != nil {
			out = append(out, MACBinding{MAC: i.Iface.MAC.MAC, At: i.Iface.MAC.At, Kind: "ifcfg HWADDR", Name: i.Iface.Name})
		}
		if i.OK && i.IfaceOK && i.Iface.SetMAC != nil {
			out = append(out, MACBinding{MAC: i.Iface.SetMAC.MAC, At: i.Iface.SetMAC.At, Kind: "ifcfg MACADDR", Name: i.Iface.Name, Sets: true})
		}
	}
	for _, e := range f.ENI {
		if !e.OK {
			continue
		}
		for _, st := range e.File.Stanzas {
			if m, line, ok := st.HWAddress(); ok {
				out = append(out, MACBinding{MAC: m, At: fmt.Sprintf("%s:%d", e.Name, line), Kind: "ifupdown hwaddress", Name: st.Name, Sets: true})
			}
		}
	}
	if u := f.PersistentNet; u.OK {
		for _, r := range u.Rules {
			out = append(out, MACBinding{MAC: r.MAC, At: r.At, Kind: "udev 70-persistent-net.rules", Name: r.Name})
		}
	}
	var files []netplan.File
	for _, n := range f.Netplan {
		if n.OK {
			files = append(files, n.File)
		}
	}
	for _, d := range netplan.Merge(files).Devices {
		if d.Match != nil && d.Match.MAC != nil {
			out = append(out, MACBinding{MAC: d.Match.MAC, At: d.Match.MACAt, Kind: "netplan match: macaddress", Name: cmp.Or(d.Name(), d.ID)})
		}
	}
	return out
}

// networkdBindings takes a .network or .link unit's [Match] MACAddress=
// (and PermanentMACAddress=).
func networkdBindings(u Unit) []MACBinding {
	kind, match, name := "systemd-networkd [Match] MACAddress=", networkd.Match{}, ""
	if strings.HasSuffix(u.Path, ".link") {
		l, _ := networkd.ParseLink(UnitOf(u.INI))
		kind, match, name = "systemd .link [Match] MACAddress=", l.Match, cmp.Or(l.Name, matchLabel(l.Match))
	} else {
		n, _ := networkd.ParseNetwork(UnitOf(u.INI))
		match, name = n.Match, matchLabel(n.Match)
	}
	out := make([]MACBinding, 0, len(match.MACs))
	for _, m := range match.MACs {
		out = append(out, MACBinding{MAC: m.MAC, At: m.At, Kind: kind, Name: name})
	}
	return out
}

// matchLabel names the interfaces a [Match] is about, for messages.
func matchLabel(m networkd.Match) string { return strings.Join(m.Names, " ") }
