package networkconfig

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// ParseNetworkYAML reads a cloud-init network-config (YAML or JSON,
// version 1 or 2, with or without the top-level "network" key) into an
// Intent.
func ParseNetworkYAML(name string, b []byte) (Intent, []problem.Problem) {
	in, _, probs := parseNetworkConfig(name, b)
	return in, probs
}

// parseNetworkConfig is ParseNetworkYAML that also says whether the file
// is cloud-init's "config: disabled", which declares nothing.
func parseNetworkConfig(name string, b []byte) (Intent, bool, []problem.Problem) {
	c, probs := netplan.ParseNetworkConfig(name, b)
	in := Intent{Files: []string{name}}
	switch c.Version {
	case 1:
		in.Source = "cloud-init network-config v1"
		in.Ifaces = v1Intent(c.V1.Ifaces)
		in.Nameservers = c.V1.Nameservers
		in.Search = c.V1.Search
	case 2:
		in.Source = "netplan"
		in.Ifaces = netplanIntent(netplan.Merge([]netplan.File{c.V2}).Devices)
	}
	return in, c.Disabled, netconf.FromParser(probs)
}

var netplanKinds = map[string]string{netplan.Ethernets: KindEthernet, netplan.VLANs: KindVLAN, netplan.Bonds: KindBond, netplan.Bridges: KindBridge}

// netplanIntent turns merged netplan devices into declared interfaces;
// wifis, modems and tunnels are not judged.
func netplanIntent(devs []netplan.Device) []IntentIface {
	var out []IntentIface
	for _, d := range devs {
		kind, ok := netplanKinds[d.Kind]
		if !ok {
			continue
		}
		x := IntentIface{ID: d.ID, Kind: kind, At: d.At, Name: d.Name(), MTU: d.MTU, MTUAt: d.MTUAt,
			DHCP4: isTrue(d.DHCP4), DHCP6: isTrue(d.DHCP6), Optional: isTrue(d.Optional),
			Addresses: d.Addresses, Nameservers: d.Nameservers, Search: d.Search,
			Members: d.Interfaces, MembersAt: d.InterfacesAt, VLANAt: d.VLANAt}
		if m := d.Match; m != nil {
			x.MatchMAC, x.MatchDriver = m.MAC, strings.Join(m.Drivers, " ")
			if m.Name != nil && netplan.IsGlob(*m.Name) {
				x.MatchName = *m.Name
			}
		}
		for _, g := range []*DeclAddr{d.Gateway4, d.Gateway6} {
			if g != nil {
				x.Gateways = append(x.Gateways, *g)
			}
		}
		for _, r := range d.Routes {
			if r.Via != nil && r.Default() {
				x.Gateways = append(x.Gateways, *r.Via)
			}
		}
		if d.VLANID != nil {
			x.VLANID = *d.VLANID
		}
		if d.VLANLink != nil {
			x.VLANLink = *d.VLANLink
		}
		out = append(out, x)
	}
	return out
}

var v1Kinds = map[string]string{"physical": KindEthernet, "vlan": KindVLAN, "bond": KindBond, "bridge": KindBridge}

// v1Intent turns network-config version 1 entries into declared
// interfaces.
func v1Intent(ds []netplan.V1Iface) []IntentIface {
	var out []IntentIface
	for _, d := range ds {
		out = append(out, IntentIface{ID: d.Name, Name: d.Name, Kind: v1Kinds[d.Type], At: d.At, MatchMAC: d.MAC,
			DHCP4: d.DHCP4, DHCP6: d.DHCP6, Addresses: d.Addresses, Gateways: d.Gateways,
			Nameservers: d.Nameservers, Search: d.Search, MTU: d.MTU, MTUAt: d.MTUAt,
			VLANID: d.VLANID, VLANAt: d.VLANAt, VLANLink: d.VLANLink, Members: d.Members, MembersAt: d.MembersAt})
	}
	return out
}

func isTrue(b *bool) bool { return b != nil && *b }
