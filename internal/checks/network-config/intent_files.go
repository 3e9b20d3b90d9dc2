package networkconfig

import (
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/eni"
	"github.com/guestcheck/guestcheck/internal/parse/ifcfg"
	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/nmconn"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// NMIntent turns parsed NetworkManager keyfiles into declared
// interfaces. Profiles refer to each other (vlan.parent, master) by
// interface name or by connection UUID, which cloud-init uses; both are
// resolved to the referenced profile's ID.
func NMIntent(files []netconf.INI) ([]IntentIface, []problem.Problem) {
	var probs []problem.Problem
	byRef := map[string]string{} // uuid or interface-name -> profile ID
	var out []IntentIface
	var masters []nmconn.Connection
	for _, f := range files {
		c, p := nmconn.Parse(netconf.KeyfileOf(f))
		probs = append(probs, netconf.FromParser(p)...)
		if c.InterfaceName != "" {
			byRef[c.InterfaceName] = c.ID
		}
		if c.UUID != "" {
			byRef[strings.ToLower(c.UUID)] = c.ID
		}
		d := IntentIface{ID: c.ID, At: c.IDAt, Name: c.InterfaceName, MTU: c.MTU, MTUAt: c.MTUAt,
			DHCP4: c.DHCPv4() && !c.IPv4.Off, DHCP6: c.DHCPv6()}
		switch c.Type {
		case "vlan":
			d.Kind, d.VLANID, d.VLANAt, d.VLANLink = KindVLAN, c.VLANID, c.VLANAt, c.VLANParent
		case "bond":
			d.Kind, d.Members = KindBond, []string{}
		case "bridge":
			d.Kind, d.Members = KindBridge, []string{}
		case "ethernet", "802-3-ethernet", "":
			d.Kind = KindEthernet
		default:
			continue // wifi, loopback, tunnels: not judged
		}
		if c.MAC != nil {
			d.MatchMAC = c.MAC.MAC
		}
		for _, ip := range []nmconn.IP{c.IPv4, c.IPv6} {
			d.Addresses = append(d.Addresses, ip.Addresses...)
			if ip.Gateway != nil && !ip.NeverDefault {
				d.Gateways = append(d.Gateways, *ip.Gateway)
			}
			d.Nameservers = append(d.Nameservers, ip.DNS...)
			d.Search = append(d.Search, ip.DNSSearch...)
		}
		// netplan and cloud-init repeat dns-search in [ipv4] and [ipv6].
		d.Search = uniqueStrings(d.Search)
		masters = append(masters, c)
		out = append(out, d)
	}
	resolve := func(r string) string {
		if id, ok := byRef[strings.ToLower(r)]; ok {
			return id
		}
		if id, ok := byRef[r]; ok {
			return id
		}
		return r
	}
	for i := range out {
		if out[i].Kind == KindVLAN && out[i].VLANLink != "" {
			out[i].VLANLink = resolve(out[i].VLANLink)
		}
		if m := masters[i]; m.Master != "" {
			mid := resolve(m.Master)
			for j := range out {
				if out[j].ID == mid && (out[j].Kind == KindBond || out[j].Kind == KindBridge) {
					out[j].Members = append(out[j].Members, out[i].ID)
					if out[j].MembersAt == "" {
						out[j].MembersAt = m.MasterAt
					}
				}
			}
		}
	}
	return out, probs
}

// ENIIntent turns parsed interfaces(5) files into declared interfaces.
// "inet" and "inet6" stanzas of one name are one interface; loopback is
// left out.
func ENIIntent(files []eni.File) ([]IntentIface, []problem.Problem) {
	var probs []problem.Problem
	var out []IntentIface
	idx := map[string]int{}
	hot := map[string]bool{}
	for _, f := range files {
		for _, h := range f.Hotplug {
			hot[h] = true
		}
	}
	for _, f := range files {
		bad := func(line int, msg string) { probs = append(probs, problem.Problem{File: f.Name, Line: line, Msg: msg}) }
		for _, s := range f.Stanzas {
			if s.Method == "loopback" || s.Name == "lo" {
				continue
			}
			// "eth0:1" is an alias: another address on eth0 (cloud-init
			// renders a second subnet that way).
			if base, label, ok := strings.Cut(s.Name, ":"); ok && base != "" && label != "" {
				s.Name = base
			}
			i, ok := idx[s.Name]
			if !ok {
				i = len(out)
				idx[s.Name] = i
				out = append(out, IntentIface{ID: s.Name, Name: s.Name, Kind: KindEthernet, At: s.At, Optional: hot[s.Name]})
			}
			eniStanza(&out[i], f.Name, s, bad)
		}
	}
	return out, probs
}

// eniStanza folds one "iface" stanza into the interface it declares.
func eniStanza(d *IntentIface, file string, s eni.Stanza, bad func(line int, msg string)) {
	if s.Method == "dhcp" {
		if s.Family == "inet6" {
			d.DHCP6 = true
		} else {
			d.DHCP4 = true
		}
	}
	var addr, mask eni.Option
	for _, o := range s.Options {
		switch o.Key {
		case "address":
			addr = o
		case "netmask":
			mask = o
		default:
			eniOption(d, o, netval.Loc(file, o.Line), bad)
		}
	}
	if addr.Value != "" {
		p, ok := eni.Prefix(addr.Value, mask.Value, s.Family)
		if ok {
			d.Addresses = append(d.Addresses, DeclPrefix{Prefix: p, At: netval.Loc(file, addr.Line)})
		} else {
			bad(addr.Line, "address "+netval.Quote(addr.Value)+" with netmask "+netval.Quote(mask.Value)+" is not an address with a prefix length")
		}
	}
	// ifupdown names VLANs eth0.100 or vlan100 (with
	// vlan-raw-device); the ID comes from the name.
	// An explicit vlan-id wins over the one in the name.
	if base, id, ok := strings.Cut(s.Name, "."); ok && d.VLANID == 0 {
		if n, err := strconv.Atoi(id); err == nil && n <= 4094 {
			d.Kind, d.VLANID, d.VLANAt = KindVLAN, n, s.At
			if d.VLANLink == "" {
				d.VLANLink = base
			}
		}
	} else if rest, ok := strings.CutPrefix(s.Name, "vlan"); ok && d.VLANLink != "" {
		if n, err := strconv.Atoi(rest); err == nil && n <= 4094 {
			d.VLANID = n
		}
	}
}

// eniOption folds one stanza option (other than address and netmask)
// into d; at is where it was declared.
func eniOption(d *IntentIface, o eni.Option, at string, bad func(line int, msg string)) {
	switch o.Key {
	case "gateway":
		if a, err := netip.ParseAddr(o.Value); err == nil {
			d.Gateways = append(d.Gateways, DeclAddr{Addr: a, At: at})
		} else {
			bad(o.Line, "gateway "+netval.Quote(o.Value)+" is not an IP address")
		}
	case "dns-nameservers":
		for _, w := range strings.Fields(o.Value) {
			if a, err := netip.ParseAddr(w); err == nil {
				d.Nameservers = append(d.Nameservers, DeclAddr{Addr: a, At: at})
			} else {
				bad(o.Line, "dns-nameservers "+netval.Quote(w)+" is not an IP address")
			}
		}
	case "dns-search":
		for _, w := range strings.Fields(o.Value) {
			d.Search = append(d.Search, DeclString{Value: w, At: at})
		}
	case "mtu":
		if n, err := strconv.Atoi(o.Value); err == nil && n >= 68 && n <= 65535 {
			d.MTU, d.MTUAt = n, at
		} else {
			bad(o.Line, "mtu "+netval.Quote(o.Value)+" is not an MTU")
		}
	case "vlan-raw-device", "vlan_raw_device":
		d.Kind, d.VLANLink, d.VLANAt = KindVLAN, o.Value, at
	case "vlan-id", "vlan_id":
		if n, err := strconv.Atoi(o.Value); err == nil && n >= 0 && n <= 4094 {
			d.Kind, d.VLANID, d.VLANAt = KindVLAN, n, at
		} else {
			bad(o.Line, o.Key+" "+netval.Quote(o.Value)+" is not a VLAN ID (0-4094)")
		}
	case "bond-slaves", "bond_slaves", "bridge_ports", "bridge-ports":
		if strings.HasPrefix(o.Key, "bond") {
			d.Kind = KindBond
		} else {
			d.Kind = KindBridge
		}
		d.Members, d.MembersAt = []string{}, at
		if o.Value != "none" {
			d.Members = strings.Fields(o.Value)
		}
	case "hwaddress":
		// "hwaddress [ether] MAC" sets the MAC rather than
		// matching it: the interface must have it afterwards.
		w := strings.Fields(o.Value)
		if len(w) > 0 {
			if m, err := net.ParseMAC(w[len(w)-1]); err == nil {
				d.MatchMAC = m
			}
		}
	}
}

// IfcfgIntent turns one parsed ifcfg file (ParseIfcfg) into a declared
// interface; ok is false for files that declare none (loopback, aliases).
func IfcfgIntent(file string, vars map[string]netconf.IfcfgVar) (IntentIface, []problem.Problem, bool) {
	i, probs, ok := netconf.IfcfgOf(file, vars)
	return ifcfgIntent(i), probs, ok
}

func ifcfgIntent(i ifcfg.Iface) IntentIface {
	id := strings.TrimPrefix(path.Base(i.File), "ifcfg-")
	d := IntentIface{ID: id, Name: i.Name, Kind: KindEthernet, At: i.At, DHCP4: i.DHCP4, DHCP6: i.DHCP6,
		Addresses:   i.Addresses,
		Gateways:    i.Gateways,
		Nameservers: i.DNS,
		Search:      i.Domains,
		MTU:         i.MTU, MTUAt: i.MTUAt}
	if i.MAC != nil {
		d.MatchMAC = i.MAC.MAC
	}
	switch i.Type {
	case "vlan":
		d.Kind, d.VLANID, d.VLANAt, d.VLANLink = KindVLAN, i.VLANID, i.VLANAt, i.PhysDev
	case "bond":
		d.Kind, d.Members = KindBond, []string{}
	case "bridge":
		d.Kind, d.Members = KindBridge, []string{}
	}
	return d
}

// ifcfgMembers fills bond and bridge members from MASTER= and BRIDGE= of
// the other ifcfg files.
func ifcfgMembers(ds []IntentIface, masters map[string]string) {
	for member, m := range masters {
		for i := range ds {
			if ds[i].Name == m || ds[i].ID == m {
				ds[i].Members = append(ds[i].Members, member)
			}
		}
	}
}

// uniqueStrings drops repeated values, keeping the first place each was
// declared at.
func uniqueStrings(ss []DeclString) []DeclString {
	var out []DeclString
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s.Value] {
			seen[s.Value] = true
			out = append(out, s)
		}
	}
	return out
}
