package netcheck

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// ParseNetworkYAML parses a netplan file or a cloud-init network-config
// (YAML or JSON, version 1 or 2, with or without the top-level "network"
// key) into an Intent. Values of the wrong type are problems with file
// and line; the rest of the file is still read.
func ParseNetworkYAML(name string, b []byte) (Intent, []Problem) {
	in := Intent{Files: []string{name}}
	p := &yamlIntent{file: name}
	var doc yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&doc)
	if errors.Is(err, io.EOF) {
		return in, nil
	}
	if err != nil {
		n, msg := yamlErrorLine(b, err)
		p.bad(n, "invalid YAML: %s", msg)
		return in, p.probs
	}
	top := deref(&doc)
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		top = deref(top.Content[0])
	}
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return in, nil
	}
	if top.Kind != yaml.MappingNode {
		p.bad(top.Line, "top level is not a mapping")
		return in, p.probs
	}
	net := top
	if n := mapGet(top, "network"); n != nil {
		if n.Kind != yaml.MappingNode {
			p.bad(n.Line, `"network" is not a mapping`)
			return in, p.probs
		}
		net = n
	}
	version := 2
	if v := mapGet(net, "version"); v != nil {
		s, _ := scalar(v)
		switch s {
		case "1":
			version = 1
		case "2":
		default:
			p.bad(v.Line, "version must be 1 or 2, not %s", quoteShort(s))
			return in, p.probs
		}
	}
	if version == 1 {
		in.Source = "cloud-init network-config v1"
		p.v1(net, &in)
	} else {
		in.Source = "netplan"
		p.v2(net, &in)
	}
	return in, p.probs
}

type yamlIntent struct {
	file  string
	probs []Problem
}

func (p *yamlIntent) bad(line int, format string, a ...any) {
	p.probs = append(p.probs, Problem{File: p.file, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (p *yamlIntent) at(n *yaml.Node) string { return loc(p.file, n.Line) }

// list returns the items of a sequence; a scalar counts as a one-item
// list (cloud-init accepts both for addresses and search domains).
func (p *yamlIntent) list(n *yaml.Node, what string) []*yaml.Node {
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.SequenceNode:
		out := make([]*yaml.Node, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, deref(c))
		}
		return out
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		// cloud-init v1 also accepts "a b c" for a list of addresses.
		var out []*yaml.Node
		for _, f := range strings.Fields(strings.ReplaceAll(n.Value, ",", " ")) {
			out = append(out, &yaml.Node{Kind: yaml.ScalarNode, Value: f, Line: n.Line, Tag: "!!str"})
		}
		return out
	case n.Kind == yaml.ScalarNode:
		return nil
	}
	p.bad(n.Line, "%s is not a list", what)
	return nil
}

func (p *yamlIntent) str(m *yaml.Node, key, what string) (string, *yaml.Node) {
	v := mapGet(m, key)
	if v == nil || v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
		return "", nil
	}
	s, ok := scalar(v)
	if !ok {
		p.bad(v.Line, "%s: %q is not a string", what, key)
		return "", nil
	}
	return s, v
}

func (p *yamlIntent) boolean(m *yaml.Node, key, what string) bool {
	s, v := p.str(m, key, what)
	if v == nil {
		return false
	}
	b, ok := netplanBool(s)
	if !ok {
		p.bad(v.Line, "%s: %q must be true or false, not %s", what, key, quoteShort(s))
	}
	return b
}

func (p *yamlIntent) integer(m *yaml.Node, key, what string, lo, hi int) (int, string) {
	s, v := p.str(m, key, what)
	if v == nil {
		return 0, ""
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		p.bad(v.Line, "%s: %q must be a number from %d to %d, not %s", what, key, lo, hi, quoteShort(s))
		return 0, ""
	}
	return n, p.at(v)
}

func (p *yamlIntent) addr(n *yaml.Node, what string) (DeclAddr, bool) {
	s, _ := scalar(n)
	a, err := netip.ParseAddr(s)
	if err != nil {
		p.bad(n.Line, "%s %s is not an IP address", what, quoteShort(s))
		return DeclAddr{}, false
	}
	return DeclAddr{Addr: a.Unmap(), At: p.at(n)}, true
}

func (p *yamlIntent) mac(n *yaml.Node, what string) net.HardwareAddr {
	s, _ := scalar(n)
	m, err := net.ParseMAC(s)
	if err != nil {
		p.bad(n.Line, "%s %s is not a MAC address", what, quoteShort(s))
		return nil
	}
	return m
}

// isDefaultDst reports whether a route destination means the default
// route in netplan or cloud-init spelling.
func isDefaultDst(s string) bool {
	switch s {
	case "default", "0.0.0.0/0", "::/0", "0.0.0.0", "::":
		return true
	}
	return false
}

var v2Kinds = map[string]string{"ethernets": KindEthernet, "vlans": KindVLAN, "bonds": KindBond, "bridges": KindBridge}

// v2 reads netplan (cloud-init version 2) devices.
func (p *yamlIntent) v2(net *yaml.Node, in *Intent) {
	// A section key may repeat; netplan reads every occurrence.
	for i := 0; i+1 < len(net.Content); i += 2 {
		section := net.Content[i].Value
		kind, ok := v2Kinds[section]
		if !ok {
			continue
		}
		devs := deref(net.Content[i+1])
		if devs.Kind == yaml.ScalarNode && devs.Tag == "!!null" {
			continue
		}
		if devs.Kind != yaml.MappingNode {
			p.bad(devs.Line, "%q is not a mapping of devices", section)
			continue
		}
		for j := 0; j+1 < len(devs.Content); j += 2 {
			id, val := devs.Content[j], deref(devs.Content[j+1])
			d := IntentIface{ID: id.Value, Kind: kind, At: p.at(id), Name: id.Value}
			if val.Kind != yaml.MappingNode {
				// netplan refuses an empty definition too ("expected mapping").
				p.bad(val.Line, "%s %q is not a mapping (write {} for no settings)", section, id.Value)
				continue
			}
			p.v2Device(section, val, &d)
			if k := slices.IndexFunc(in.Ifaces, func(x IntentIface) bool { return x.ID == d.ID && x.Kind == d.Kind }); k >= 0 {
				mergeIface(&in.Ifaces[k], d)
				continue
			}
			in.Ifaces = append(in.Ifaces, d)
		}
	}
}

func (p *yamlIntent) v2Device(section string, n *yaml.Node, d *IntentIface) {
	what := section + " " + strconv.Quote(d.ID)
	if m := mapGet(n, "match"); m != nil {
		if m.Kind != yaml.MappingNode {
			p.bad(m.Line, "%s: \"match\" is not a mapping", what)
		} else {
			d.Name = "" // with a match, the ID is only a label
			if v := mapGet(m, "macaddress"); v != nil {
				d.MatchMAC = p.mac(v, what+" match macaddress")
			}
			if v := mapGet(m, "driver"); v != nil {
				var ds []string
				for _, x := range p.list(v, what+" match driver") {
					ds = append(ds, x.Value)
				}
				d.MatchDriver = strings.Join(ds, " ")
			}
			if s, _ := p.str(m, "name", what+" match"); s != "" {
				if strings.ContainsAny(s, "*?[") {
					d.MatchName = s
				} else {
					d.Name = s
				}
			}
		}
	}
	if s, _ := p.str(n, "set-name", what); s != "" {
		d.Name = s
	}
	d.DHCP4 = p.boolean(n, "dhcp4", what)
	d.DHCP6 = p.boolean(n, "dhcp6", what)
	d.Optional = p.boolean(n, "optional", what)
	for _, a := range p.list(mapGet(n, "addresses"), what+" addresses") {
		key := a
		if a.Kind == yaml.MappingNode && len(a.Content) == 2 {
			key = a.Content[0] // {"192.0.2.10/24": {lifetime: 0, label: ...}}
		}
		s, _ := scalar(key)
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			p.bad(a.Line, "%s: address %s is not an address with a prefix length", what, quoteShort(s))
			continue
		}
		d.Addresses = append(d.Addresses, DeclPrefix{Prefix: pr, At: p.at(a)})
	}
	for _, key := range []string{"gateway4", "gateway6"} {
		if v := mapGet(n, key); v != nil {
			if g, ok := p.addr(v, what+" "+key); ok {
				d.Gateways = append(d.Gateways, g)
			}
		}
	}
	for _, r := range p.list(mapGet(n, "routes"), what+" routes") {
		if r.Kind != yaml.MappingNode {
			p.bad(r.Line, "%s: a route is not a mapping", what)
			continue
		}
		to, _ := p.str(r, "to", what+" route")
		_, vn := p.str(r, "via", what+" route")
		if vn == nil || !isDefaultDst(to) {
			continue
		}
		if tbl, _ := p.str(r, "table", what+" route"); tbl != "" && tbl != "254" && tbl != "main" {
			continue // a policy table's default is not the general one
		}
		if g, ok := p.addr(vn, what+" route via"); ok {
			g.Metric, _ = p.str(r, "metric", what+" route")
			d.Gateways = append(d.Gateways, g)
		}
	}
	if ns := mapGet(n, "nameservers"); ns != nil {
		if ns.Kind != yaml.MappingNode {
			p.bad(ns.Line, "%s: \"nameservers\" is not a mapping", what)
		} else {
			for _, a := range p.list(mapGet(ns, "addresses"), what+" nameservers addresses") {
				if x, ok := p.addr(a, what+" nameserver"); ok {
					d.Nameservers = append(d.Nameservers, x)
				}
			}
			for _, s := range p.list(mapGet(ns, "search"), what+" nameservers search") {
				d.Search = append(d.Search, DeclString{Value: s.Value, At: p.at(s)})
			}
		}
	}
	d.MTU, d.MTUAt = p.integer(n, "mtu", what, 68, 65535)
	if section == "vlans" {
		d.VLANID, d.VLANAt = p.integer(n, "id", what, 0, 4094)
		d.VLANLink, _ = p.str(n, "link", what)
	}
	if section == "bonds" || section == "bridges" {
		if v := mapGet(n, "interfaces"); v != nil {
			d.MembersAt = p.at(v)
			d.Members = []string{}
			for _, m := range p.list(v, what+" interfaces") {
				d.Members = append(d.Members, m.Value)
			}
		}
	}
}

// v1 reads cloud-init's version 1 "config" list.
func (p *yamlIntent) v1(net *yaml.Node, in *Intent) {
	cfg := mapGet(net, "config")
	var globalGW []DeclAddr
	for _, e := range p.list(cfg, `"config"`) {
		if e.Kind != yaml.MappingNode {
			p.bad(e.Line, "config entry is not a mapping")
			continue
		}
		typ, _ := p.str(e, "type", "config entry")
		name, nn := p.str(e, "name", typ)
		what := typ + " " + strconv.Quote(name)
		switch typ {
		case "physical", "vlan", "bond", "bridge":
			if nn == nil {
				p.bad(e.Line, "%s entry without a name", typ)
				continue
			}
			d := IntentIface{ID: name, Name: name, At: p.at(nn), Kind: map[string]string{
				"physical": KindEthernet, "vlan": KindVLAN, "bond": KindBond, "bridge": KindBridge}[typ]}
			if v := mapGet(e, "mac_address"); v != nil && typ == "physical" {
				d.MatchMAC = p.mac(v, what+" mac_address")
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
			in.Ifaces = append(in.Ifaces, d)
		case "nameserver":
			var ifc *IntentIface
			if on, _ := p.str(e, "interface", what); on != "" {
				for i := range in.Ifaces {
					if in.Ifaces[i].ID == on {
						ifc = &in.Ifaces[i]
					}
				}
			}
			for _, a := range p.list(mapGet(e, "address"), "nameserver address") {
				if x, ok := p.addr(a, "nameserver"); ok {
					if ifc != nil {
						ifc.Nameservers = append(ifc.Nameservers, x)
					} else {
						in.Nameservers = append(in.Nameservers, x)
					}
				}
			}
			for _, s := range p.list(mapGet(e, "search"), "nameserver search") {
				ds := DeclString{Value: s.Value, At: p.at(s)}
				if ifc != nil {
					ifc.Search = append(ifc.Search, ds)
				} else {
					in.Search = append(in.Search, ds)
				}
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
		for i := range in.Ifaces {
			for _, a := range in.Ifaces[i].Addresses {
				if a.Prefix.Masked().Contains(g.Addr) {
					in.Ifaces[i].Gateways = append(in.Ifaces[i].Gateways, g)
				}
			}
		}
	}
}

func (p *yamlIntent) v1Subnet(s *yaml.Node, what string, d *IntentIface) {
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
		pr, ok := v1Prefix(addr, s, p, what)
		if ok {
			d.Addresses = append(d.Addresses, DeclPrefix{Prefix: pr, At: p.at(an)})
		}
	case "manual", "ipv6_slaac", "":
	default:
		p.bad(tn.Line, "%s: unknown subnet type %s", what, quoteShort(typ))
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
		d.Search = append(d.Search, DeclString{Value: x.Value, At: p.at(x)})
	}
	for _, r := range p.list(mapGet(s, "routes"), what+" routes") {
		if g, ok := p.v1Route(r, what+" route"); ok {
			d.Gateways = append(d.Gateways, g)
		}
	}
}

// v1Route returns the gateway of a default route entry.
func (p *yamlIntent) v1Route(r *yaml.Node, what string) (DeclAddr, bool) {
	if r.Kind != yaml.MappingNode {
		p.bad(r.Line, "%s is not a mapping", what)
		return DeclAddr{}, false
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
		return DeclAddr{}, false
	}
	if !(isDefaultDst(dst) && (mask == "" || mask == "0" || mask == "0.0.0.0" || strings.Contains(dst, "/"))) {
		return DeclAddr{}, false
	}
	g, ok := p.addr(gw, what+" gateway")
	g.Metric, _ = p.str(r, "metric", what)
	return g, ok
}

// v1Prefix reads a cloud-init v1 static address: "192.0.2.10/24", or an
// address with "netmask" (dotted or a length) or "prefix".
func v1Prefix(addr string, s *yaml.Node, p *yamlIntent, what string) (netip.Prefix, bool) {
	if pr, err := netip.ParsePrefix(addr); err == nil {
		return pr, true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		p.bad(s.Line, "%s: address %s is not an IP address", what, quoteShort(addr))
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
	bits, ok := maskBits(mask)
	if !ok || bits > a.BitLen() {
		p.bad(mn.Line, "%s: netmask %s is not a netmask", what, quoteShort(mask))
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, bits), true
}

// maskBits reads a prefix length or a dotted IPv4 netmask.
func maskBits(s string) (int, bool) {
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
