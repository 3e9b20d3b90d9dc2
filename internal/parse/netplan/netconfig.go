package netplan

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Config is a cloud-init network-config: version 2 is netplan's format,
// version 1 cloud-init's own list of entries.
type Config struct {
	Version int // 1 or 2; 0 for an empty or unreadable file, or Disabled
	V2      File
	V1      V1
	// Disabled is set by "config: disabled" (under "network" or at the
	// top): cloud-init left the network alone, and the file declares
	// nothing.
	Disabled bool
}

// V1 is a network-config version 1 ("config" list).
type V1 struct {
	Ifaces []V1Iface
	// Nameservers and Search come from "nameserver" entries without an
	// interface: they are for the whole guest.
	Nameservers []netval.Addr
	Search      []netval.String
}

// V1Iface is a physical, vlan, bond or bridge entry, its subnets folded
// in the way cloud-init's renderers apply them.
type V1Iface struct {
	Type        string // "physical", "vlan", "bond", "bridge"
	Name, At    string
	MAC         net.HardwareAddr // mac_address of a physical entry
	DHCP4       bool
	DHCP6       bool
	Addresses   []netval.Prefix
	Gateways    []netval.Addr // default-route gateways
	Nameservers []netval.Addr
	Search      []netval.String
	MTU         int
	MTUAt       string
	VLANID      int
	VLANAt      string
	VLANLink    string
	Members     []string // bond_interfaces, bridge_interfaces; nil: unset
	MembersAt   string
}

// ParseNetworkConfig parses a cloud-init network-config (YAML or JSON,
// version 1 or 2, with or without the top-level "network" key).
func ParseNetworkConfig(name string, b []byte) (Config, []problem.Problem) {
	c := Config{V2: File{Name: name}}
	p := &parser{file: name}
	top := p.document(b)
	if top == nil {
		return c, p.probs
	}
	net := top
	if n := mapGet(top, "network"); n != nil {
		if n.Kind != yaml.MappingNode {
			p.bad(n.Line, `"network" is not a mapping`)
			return c, p.probs
		}
		net = n
	}
	if v := mapGet(net, "config"); v != nil {
		if s, ok := scalar(v); ok && s == "disabled" {
			c.Disabled = true
			return c, p.probs
		}
	}
	c.Version = 2
	if v := mapGet(net, "version"); v != nil {
		s, _ := scalar(v)
		switch s {
		case "1":
			c.Version = 1
		case "2":
		default:
			p.bad(v.Line, "version must be 1 or 2, not %s", netval.Quote(s))
			c.Version = 0
			return c, p.probs
		}
	}
	if c.Version == 1 {
		p.v1(net, &c.V1)
	} else {
		p.network(net, &c.V2)
	}
	return c, p.probs
}

// v1 reads cloud-init's version 1 "config" list.
func (p *parser) v1(net *yaml.Node, c *V1) {
	var globalGW []netval.Addr
	for _, e := range p.list(mapGet(net, "config"), `"config"`) {
		if e.Kind != yaml.MappingNode {
			p.bad(e.Line, "config entry is not a mapping")
			continue
		}
		typ, _ := p.str(e, "type", "config entry")
		name, nn := p.str(e, "name", typ)
		what := typ + " " + strconv.Quote(name)
		switch typ {
		case "physical", "vlan", "bond", "bridge":
			if name == "" {
				p.bad(e.Line, "%s entry without a name", typ)
				continue
			}
			d := V1Iface{Type: typ, Name: name, At: p.at(nn)}
			if v := mapGet(e, "mac_address"); v != nil && typ == "physical" {
				d.MAC = p.mac(v, what+" mac_address")
			}
			d.MTU, d.MTUAt = p.integer(e, "mtu", what, 68, 65535)
			if typ == "vlan" {
				d.VLANID, d.VLANAt = p.integer(e, "vlan_id", what, 0, 4094)
				d.VLANLink, _ = p.str(e, "vlan_link", what)
			}
			for _, key := range []string{"bond_interfaces", "bridge_interfaces"} {
				if v := mapGet(e, key); v != nil {
					d.MembersAt = p.at(v)
					d.Members = []string{}
					for _, m := range p.list(v, what+" "+key) {
						d.Members = append(d.Members, m.Value)
					}
				}
			}
			for _, s := range p.list(mapGet(e, "subnets"), what+" subnets") {
				p.v1Subnet(s, what, &d)
			}
			c.Ifaces = append(c.Ifaces, d)
		case "nameserver":
			ns, search := &c.Nameservers, &c.Search
			if on, _ := p.str(e, "interface", what); on != "" {
				for i := range c.Ifaces {
					if c.Ifaces[i].Name == on {
						ns, search = &c.Ifaces[i].Nameservers, &c.Ifaces[i].Search
					}
				}
			}
			for _, a := range p.list(mapGet(e, "address"), "nameserver address") {
				if x, ok := p.addr(a, "nameserver"); ok {
					*ns = append(*ns, x)
				}
			}
			for _, s := range p.list(mapGet(e, "search"), "nameserver search") {
				*search = append(*search, netval.String{Value: s.Value, At: p.at(s)})
			}
		case "route":
			if g, ok := p.v1Route(e, "route"); ok {
				globalGW = append(globalGW, g)
			}
		case "":
			p.bad(e.Line, "config entry without a type")
		}
	}
	// A top-level default route belongs to the interface whose static
	// subnet holds its gateway, as cloud-init's renderers place it.
	for _, g := range globalGW {
		for i := range c.Ifaces {
			for _, a := range c.Ifaces[i].Addresses {
				if a.Prefix.Masked().Contains(g.Addr) {
					c.Ifaces[i].Gateways = append(c.Ifaces[i].Gateways, g)
				}
			}
		}
	}
}

func (p *parser) v1Subnet(s *yaml.Node, what string, d *V1Iface) {
	if s.Kind != yaml.MappingNode {
		p.bad(s.Line, "%s: a subnet is not a mapping", what)
		return
	}
	typ, tn := p.str(s, "type", what+" subnet")
	switch typ {
	case "dhcp", "dhcp4":
		d.DHCP4 = true
	case "dhcp6", "ipv6_dhcpv6-stateful", "ipv6_dhcpv6-stateless":
		d.DHCP6 = true
	case "static", "static6":
		addr, an := p.str(s, "address", what+" subnet")
		if an == nil {
			p.bad(s.Line, "%s: static subnet without an address", what)
			break
		}
		if pr, ok := p.v1Prefix(addr, s, what); ok {
			d.Addresses = append(d.Addresses, netval.Prefix{Prefix: pr, At: p.at(an)})
		}
	case "manual", "ipv6_slaac", "":
	default:
		p.bad(tn.Line, "%s: unknown subnet type %s", what, netval.Quote(typ))
	}
	if v := mapGet(s, "gateway"); v != nil {
		if g, ok := p.addr(v, what+" gateway"); ok {
			g.Metric, _ = p.str(s, "metric", what+" subnet")
			d.Gateways = append(d.Gateways, g)
		}
	}
	for _, a := range p.list(mapGet(s, "dns_nameservers"), what+" dns_nameservers") {
		if x, ok := p.addr(a, what+" nameserver"); ok {
			d.Nameservers = append(d.Nameservers, x)
		}
	}
	for _, x := range p.list(mapGet(s, "dns_search"), what+" dns_search") {
		d.Search = append(d.Search, netval.String{Value: x.Value, At: p.at(x)})
	}
	for _, r := range p.list(mapGet(s, "routes"), what+" routes") {
		if g, ok := p.v1Route(r, what+" route"); ok {
			d.Gateways = append(d.Gateways, g)
		}
	}
}

// v1Route returns the gateway of a default route entry.
func (p *parser) v1Route(r *yaml.Node, what string) (netval.Addr, bool) {
	if r.Kind != yaml.MappingNode {
		p.bad(r.Line, "%s is not a mapping", what)
		return netval.Addr{}, false
	}
	dst, _ := p.str(r, "destination", what)
	if dst == "" {
		dst, _ = p.str(r, "network", what)
	}
	mask, _ := p.str(r, "netmask", what)
	if pre, _ := p.str(r, "prefix", what); pre != "" {
		mask = pre
	}
	gw := mapGet(r, "gateway")
	if gw == nil {
		return netval.Addr{}, false
	}
	if !(IsDefaultDst(dst) && (mask == "" || mask == "0" || mask == "0.0.0.0" || strings.Contains(dst, "/"))) {
		return netval.Addr{}, false
	}
	g, ok := p.addr(gw, what+" gateway")
	g.Metric, _ = p.str(r, "metric", what)
	return g, ok
}

// v1Prefix reads a cloud-init v1 static address: "192.0.2.10/24", or an
// address with "netmask" (dotted or a length) or "prefix".
func (p *parser) v1Prefix(addr string, s *yaml.Node, what string) (netip.Prefix, bool) {
	if pr, err := netip.ParsePrefix(addr); err == nil {
		return pr, true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		p.bad(s.Line, "%s: address %s is not an IP address", what, netval.Quote(addr))
		return netip.Prefix{}, false
	}
	mask, mn := p.str(s, "netmask", what)
	if pre, pn := p.str(s, "prefix", what); pn != nil {
		mask, mn = pre, pn
	}
	if mn == nil {
		if a.Is4() {
			return netip.PrefixFrom(a, 24), true // cloud-init's default for IPv4 without a mask
		}
		return netip.PrefixFrom(a, 64), true
	}
	bits, ok := MaskBits(mask)
	if !ok || bits > a.BitLen() {
		p.bad(mn.Line, "%s: netmask %s is not a netmask", what, netval.Quote(mask))
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, bits), true
}

func (p *parser) mac(n *yaml.Node, what string) net.HardwareAddr {
	s, _ := scalar(n)
	m, err := net.ParseMAC(s)
	if err != nil {
		p.bad(n.Line, "%s %s is not a MAC address", what, netval.Quote(s))
		return nil
	}
	return m
}

// MaskBits reads a prefix length or a dotted IPv4 netmask.
func MaskBits(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n <= 128
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return 0, false
	}
	ones, bits := net.IPMask(a.AsSlice()).Size()
	return ones, bits == 32
}
