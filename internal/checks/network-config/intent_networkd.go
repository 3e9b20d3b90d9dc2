package networkconfig

import (
	"cmp"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// NetworkdIntent turns parsed systemd-networkd .network and .netdev files
// (drop-ins already appended) into declared interfaces: one per .network
// file, named by its literal [Match] Name=, with its ID the file's stem.
// VLAN=, Bond= and Bridge= tie the files together; a .netdev gives the
// kind and the VLAN ID.
func NetworkdIntent(networks, netdevs []netconf.INI) ([]IntentIface, []problem.Problem) {
	var probs []problem.Problem
	devs := map[string]networkd.NetDev{}
	for _, f := range netdevs {
		nd, p := networkd.ParseNetDev(netconf.UnitOf(f))
		probs = append(probs, netconf.FromParser(p)...)
		if nd.Name != "" {
			devs[nd.Name] = nd
		}
	}
	var out []IntentIface
	parentOf := map[string]string{}    // VLAN netdev name -> parent ID
	membersOf := map[string][]string{} // bond/bridge name -> member IDs
	membersAt := map[string]string{}
	for _, f := range networks {
		n, p := networkd.ParseNetwork(netconf.UnitOf(f))
		probs = append(probs, netconf.FromParser(p)...)
		stem := strings.TrimSuffix(path.Base(f.File), ".network")
		d := IntentIface{ID: stem, Kind: KindEthernet, At: cmp.Or(n.Match.NameAt, netval.Loc(f.File, 1)),
			MatchDriver: n.Match.Driver, DHCP4: n.DHCPv4(), DHCP6: n.DHCPv6(), MTU: n.MTU, MTUAt: n.MTUAt, Optional: n.Optional,
			Addresses:   n.Addresses,
			Gateways:    n.Gateways,
			Nameservers: n.DNS,
			Search:      n.Domains}
		switch names := n.Match.Names; {
		case len(names) == 1 && !strings.ContainsAny(names[0], "*?[!"):
			d.Name = names[0]
		case len(names) > 0:
			d.MatchName = strings.Join(names, " ")
		}
		if len(n.Match.MACs) > 0 {
			d.MatchMAC = n.Match.MACs[len(n.Match.MACs)-1].MAC
		}
		for _, v := range n.VLANs {
			parentOf[v] = stem
		}
		for _, m := range []struct{ name, at string }{{n.Bond, n.BondAt}, {n.Bridge, n.BridgeAt}} {
			if m.name != "" {
				membersOf[m.name] = append(membersOf[m.name], stem)
				if membersAt[m.name] == "" {
					membersAt[m.name] = m.at
				}
			}
		}
		out = append(out, d)
	}
	for i := range out {
		d := &out[i]
		nd, ok := devs[d.Name]
		if !ok {
			continue
		}
		switch nd.Kind {
		case "vlan":
			d.Kind, d.VLANID, d.VLANAt, d.VLANLink = KindVLAN, nd.VLANID, nd.NameAt, parentOf[d.Name]
		case "bond":
			d.Kind = KindBond
		case "bridge":
			d.Kind = KindBridge
		}
		if d.MTU == 0 && nd.MTU != 0 {
			d.MTU, d.MTUAt = nd.MTU, nd.MTUAt
		}
		if d.Kind == KindBond || d.Kind == KindBridge {
			d.Members, d.MembersAt = membersOf[d.Name], membersAt[d.Name]
			if d.Members == nil {
				d.Members = []string{}
			}
		}
	}
	return out, probs
}
