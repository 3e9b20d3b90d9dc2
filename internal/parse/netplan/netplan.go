// Package netplan parses netplan's YAML (netplan(5)), which is also
// cloud-init's network-config version 2, and cloud-init's older
// network-config version 1. Parse reads one /etc/netplan file; Merge
// folds several files together in netplan's order and with its rules
// (a later file overrides scalars, merges mappings such as match key by
// key, and appends to sequences such as addresses); ParseNetworkConfig
// reads the network-config cloud-init was given, with or without the
// top-level "network" key, as YAML or JSON. Parsing is pure: values of
// the wrong type are problems with file and line, and the rest of the
// file is still read.
package netplan

import (
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Device kinds: the sections of "network" that define devices.
const (
	Ethernets = "ethernets"
	Bonds     = "bonds"
	Bridges   = "bridges"
	VLANs     = "vlans"
)

// kinds lists every device section netplan 0.106 knows.
var kinds = []string{Ethernets, Bonds, Bridges, VLANs, "wifis", "modems", "tunnels", "vrfs", "nm-devices"}

// File is one parsed netplan file.
type File struct {
	Name     string
	Renderer *string // network: renderer
	Devices  []Device
}

// Device is one device definition. Pointer fields and nil lists are
// unset, so that Merge can tell "not set here" from a value.
type Device struct {
	ID   string
	Kind string // the section: Ethernets, Bonds, ...
	// At locates the first definition ("file:line"); the *At fields
	// locate the value that won the merge.
	At string

	Renderer       *string
	DHCP4, DHCP6   *bool
	DHCPAt         string // the first of dhcp4 and dhcp6
	DHCPIdentifier *string
	DHCPIDAt       string
	Optional       *bool
	Match          *Match
	SetName        *string

	Addresses          []netval.Prefix
	Gateway4, Gateway6 *netval.Addr
	Routes             []Route
	Nameservers        []netval.Addr
	Search             []netval.String
	MTU                int // 0: unset
	MTUAt              string
	VLANID             *int
	VLANAt             string
	VLANLink           *string
	Interfaces         []string // bond and bridge members; nil: unset
	InterfacesAt       string
}

// Match is a device's match: mapping.
type Match struct {
	MAC     net.HardwareAddr
	MACAt   string
	Name    *string // a name or a shell glob
	Drivers []string
}

// Route is one entry of routes:. Via is nil when the route has none or
// it is not an address.
type Route struct {
	To, Table, Metric string
	Via               *netval.Addr
	At                string
}

// Default reports whether the route is a default route of the main
// table (the one DHCP or a gateway also provides).
func (r Route) Default() bool {
	return IsDefaultDst(r.To) && (r.Table == "" || r.Table == "254" || r.Table == "main")
}

// IsDefaultDst reports whether a route destination means the default
// route in netplan or cloud-init spelling.
func IsDefaultDst(s string) bool {
	switch s {
	case "default", "0.0.0.0/0", "::/0", "0.0.0.0", "::":
		return true
	}
	return false
}

// Name returns the interface name the device configures: set-name, else
// a literal match name, else the ID when the device has no match (netplan
// then takes the ID as the name). It is "" for a device that only
// matches (by MAC, driver or glob).
func (d Device) Name() string {
	switch {
	case d.SetName != nil && *d.SetName != "":
		return *d.SetName
	case d.Match == nil:
		return d.ID
	case d.Match.Name != nil && !IsGlob(*d.Match.Name):
		return *d.Match.Name
	}
	return ""
}

// IsGlob reports whether a match name is a shell glob.
func IsGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// Parse parses one netplan file. It must hold a "network" mapping, as
// netplan requires.
func Parse(name string, b []byte) (File, []problem.Problem) {
	f := File{Name: name}
	p := &parser{file: name}
	top := p.document(b)
	if top == nil {
		return f, p.probs
	}
	network := mapGet(top, "network")
	switch {
	case network == nil:
		p.bad(top.Line, `no "network" key`)
	case network.Kind != yaml.MappingNode:
		p.bad(network.Line, `"network" is not a mapping`)
	default:
		p.network(network, &f)
	}
	return f, p.probs
}

// network reads the content of "network" (netplan, or cloud-init
// version 2).
func (p *parser) network(n *yaml.Node, f *File) {
	if r := mapGet(n, "renderer"); r != nil {
		if s, ok := scalar(r); ok {
			f.Renderer = &s
		} else {
			p.bad(r.Line, `"renderer" is not a string`)
		}
	}
	// A section key may repeat; netplan reads every occurrence.
	for i := 0; i+1 < len(n.Content); i += 2 {
		section := n.Content[i].Value
		if !slices.Contains(kinds, section) {
			continue
		}
		devs := deref(n.Content[i+1])
		if isNull(devs) {
			continue
		}
		if devs.Kind != yaml.MappingNode {
			p.bad(devs.Line, "%q is not a mapping of devices", section)
			continue
		}
		for j := 0; j+1 < len(devs.Content); j += 2 {
			id, val := devs.Content[j], deref(devs.Content[j+1])
			if val.Kind != yaml.MappingNode {
				// netplan refuses an empty definition too ("expected mapping").
				p.bad(val.Line, "%s %q is not a mapping (write {} for no settings)", section, id.Value)
				continue
			}
			d := Device{ID: id.Value, Kind: section, At: p.at(id)}
			p.device(val, &d)
			f.Devices = mergeDevice(f.Devices, d)
		}
	}
}

// device reads one device definition.
func (p *parser) device(n *yaml.Node, d *Device) {
	what := d.Kind + " " + strconv.Quote(d.ID)
	if s, v := p.str(n, "renderer", what); v != nil {
		d.Renderer = &s
	}
	if s, v := p.str(n, "dhcp-identifier", what); v != nil {
		d.DHCPIdentifier, d.DHCPIDAt = &s, p.at(v)
		if s != "mac" && s != "duid" {
			p.bad(v.Line, "%s: dhcp-identifier must be mac or duid, not %s", what, netval.Quote(s))
		}
	}
	if m := mapGet(n, "match"); m != nil {
		if m.Kind != yaml.MappingNode {
			p.bad(m.Line, "%s: \"match\" is not a mapping", what)
		} else {
			d.Match = p.match(m, what)
		}
	}
	if s, v := p.str(n, "set-name", what); v != nil {
		d.SetName = &s
	}
	var v4, v6 *yaml.Node
	d.DHCP4, v4 = p.boolean(n, "dhcp4", what)
	d.DHCP6, v6 = p.boolean(n, "dhcp6", what)
	if v4 != nil {
		d.DHCPAt = p.at(v4)
	} else if v6 != nil {
		d.DHCPAt = p.at(v6)
	}
	d.Optional, _ = p.boolean(n, "optional", what)
	p.addresses(n, d, what)
	p.routes(n, d, what)
	p.nameservers(n, d, what)
	d.MTU, d.MTUAt = p.integer(n, "mtu", what, 68, 65535)
	p.links(n, d, what)
}

// addresses reads a device's static addresses, plain or with options.
func (p *parser) addresses(n *yaml.Node, d *Device, what string) {
	for _, a := range p.list(mapGet(n, "addresses"), what+" addresses") {
		key := a
		if a.Kind == yaml.MappingNode && len(a.Content) == 2 {
			key = a.Content[0] // {"192.0.2.10/24": {lifetime: 0, label: ...}}
		}
		s, _ := scalar(key)
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			p.bad(a.Line, "%s: address %s is not an address with a prefix length", what, netval.Quote(s))
			continue
		}
		d.Addresses = append(d.Addresses, netval.Prefix{Prefix: pr, At: p.at(a)})
	}
}

// routes reads the deprecated gateway4 and gateway6 and the routes list.
func (p *parser) routes(n *yaml.Node, d *Device, what string) {
	for _, key := range []string{"gateway4", "gateway6"} {
		if v := mapGet(n, key); v != nil {
			if g, ok := p.addr(v, what+" "+key); ok {
				if key == "gateway4" {
					d.Gateway4 = &g
				} else {
					d.Gateway6 = &g
				}
			}
		}
	}
	for _, r := range p.list(mapGet(n, "routes"), what+" routes") {
		if r.Kind != yaml.MappingNode {
			p.bad(r.Line, "%s: a route is not a mapping", what)
			continue
		}
		rt := Route{At: p.at(r)}
		rt.To, _ = p.str(r, "to", what+" route")
		rt.Table, _ = p.str(r, "table", what+" route")
		rt.Metric, _ = p.str(r, "metric", what+" route")
		if _, vn := p.str(r, "via", what+" route"); vn != nil {
			if g, ok := p.addr(vn, what+" route via"); ok {
				g.Metric = rt.Metric
				rt.Via = &g
			}
		}
		d.Routes = append(d.Routes, rt)
	}
}

// nameservers reads the nameservers mapping: addresses and search domains.
func (p *parser) nameservers(n *yaml.Node, d *Device, what string) {
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
				d.Search = append(d.Search, netval.String{Value: s.Value, At: p.at(s)})
			}
		}
	}
}

// links reads what ties a device to others: a VLAN's id and link, a bond's
// or bridge's interfaces.
func (p *parser) links(n *yaml.Node, d *Device, what string) {
	if d.Kind == VLANs {
		if id, at := p.integer(n, "id", what, 0, 4094); at != "" {
			d.VLANID, d.VLANAt = &id, at
		}
		if s, v := p.str(n, "link", what); v != nil {
			d.VLANLink = &s
		}
	}
	if d.Kind == Bonds || d.Kind == Bridges {
		if v := mapGet(n, "interfaces"); v != nil {
			d.InterfacesAt = p.at(v)
			d.Interfaces = []string{}
			for _, m := range p.list(v, what+" interfaces") {
				d.Interfaces = append(d.Interfaces, m.Value)
			}
		}
	}
}

func (p *parser) match(m *yaml.Node, what string) *Match {
	var out Match
	if v := mapGet(m, "macaddress"); v != nil {
		if out.MAC = p.mac(v, what+" match macaddress"); out.MAC != nil {
			out.MACAt = p.at(v)
		}
	}
	if v := mapGet(m, "driver"); v != nil {
		out.Drivers = []string{}
		for _, x := range p.list(v, what+" match driver") {
			out.Drivers = append(out.Drivers, x.Value)
		}
	}
	if s, v := p.str(m, "name", what+" match"); v != nil {
		out.Name = &s
	}
	return &out
}

func (p *parser) addr(n *yaml.Node, what string) (netval.Addr, bool) {
	s, _ := scalar(n)
	a, err := netip.ParseAddr(s)
	if err != nil {
		p.bad(n.Line, "%s %s is not an IP address", what, netval.Quote(s))
		return netval.Addr{}, false
	}
	return netval.Addr{Addr: a.Unmap(), At: p.at(n)}, true
}

// Merged is the configuration netplan applies from all its files.
type Merged struct {
	Renderer string // the global renderer: the last file's that sets one, else "networkd"
	Devices  []Device
}

// Merge folds files together in the order given, which must be netplan's
// (the base names sorted, a file in /run/netplan replacing one of the
// same name in /etc/netplan, which replaces one in /lib/netplan). A
// device defined again takes each scalar from the last file that sets it,
// merges match key by key and appends to addresses, routes, nameservers
// and interfaces, as `netplan generate` does.
func Merge(files []File) Merged {
	var m Merged
	for _, f := range files {
		if f.Renderer != nil {
			m.Renderer = *f.Renderer
		}
		for _, d := range f.Devices {
			m.Devices = mergeDevice(m.Devices, d)
		}
	}
	if m.Renderer == "" {
		m.Renderer = "networkd"
	}
	return m
}

// mergeDevice adds d to devs, or folds it into the definition of the
// same kind and ID.
func mergeDevice(devs []Device, n Device) []Device {
	i := slices.IndexFunc(devs, func(x Device) bool { return x.Kind == n.Kind && x.ID == n.ID })
	if i < 0 {
		return append(devs, n)
	}
	d := &devs[i]
	set(&d.Renderer, n.Renderer)
	set(&d.DHCP4, n.DHCP4)
	set(&d.DHCP6, n.DHCP6)
	if n.DHCPAt != "" {
		d.DHCPAt = n.DHCPAt
	}
	if n.DHCPIdentifier != nil {
		d.DHCPIdentifier, d.DHCPIDAt = n.DHCPIdentifier, n.DHCPIDAt
	}
	set(&d.Optional, n.Optional)
	set(&d.SetName, n.SetName)
	if n.Match != nil {
		if d.Match == nil {
			d.Match = &Match{}
		}
		m := *d.Match // a copy: the earlier file's Match stays as parsed
		if n.Match.MAC != nil {
			m.MAC, m.MACAt = n.Match.MAC, n.Match.MACAt
		}
		set(&m.Name, n.Match.Name)
		if n.Match.Drivers != nil {
			m.Drivers = n.Match.Drivers
		}
		d.Match = &m
	}
	d.Addresses = appendNew(d.Addresses, n.Addresses)
	set(&d.Gateway4, n.Gateway4)
	set(&d.Gateway6, n.Gateway6)
	d.Routes = appendNew(d.Routes, n.Routes)
	d.Nameservers = appendNew(d.Nameservers, n.Nameservers)
	d.Search = appendNew(d.Search, n.Search)
	if n.MTU != 0 {
		d.MTU, d.MTUAt = n.MTU, n.MTUAt
	}
	if n.VLANID != nil {
		d.VLANID, d.VLANAt = n.VLANID, n.VLANAt
	}
	set(&d.VLANLink, n.VLANLink)
	if n.Interfaces != nil {
		if d.Interfaces == nil {
			d.InterfacesAt = n.InterfacesAt
		}
		d.Interfaces = appendNew(d.Interfaces, n.Interfaces)
	}
	return devs
}

func set[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// appendNew appends to a copy, so that merging never writes into the
// backing array of a parsed file.
func appendNew[T any](a, b []T) []T {
	if b == nil {
		return a
	}
	return append(slices.Clip(a), b...)
}
