package networkconfig

import (
	"net"
	"path"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Intent is the network configuration a guest was given, in one shape for
// every format it can come in (cloud-init network-config v1 and v2,
// netplan, systemd-networkd, NetworkManager keyfiles, ifupdown, ifcfg):
// what network-config compares with the running system.
type Intent struct {
	// Source names the format and who wrote it, e.g. "cloud-init
	// network-config v1" or "netplan (administrator)".
	Source string
	// Files are the files the intent was read from, shown to the operator.
	Files  []string
	Ifaces []IntentIface
	// Nameservers and Search are declared for the whole guest rather than
	// for one interface (cloud-init v1 "nameserver" entries, ifcfg DNS1
	// without a device of its own are per interface instead).
	Nameservers []DeclAddr
	Search      []DeclString
	Problems    []problem.Problem
}

// Kinds of declared interfaces.
const (
	KindEthernet = "ethernet"
	KindVLAN     = "vlan"
	KindBond     = "bond"
	KindBridge   = "bridge"
)

// IntentIface is one declared interface.
type IntentIface struct {
	// ID is the configuration's own name for the interface: a netplan
	// device ID, a NetworkManager profile id, a networkd file's match.
	ID   string
	Kind string // KindEthernet, KindVLAN, KindBond, KindBridge
	At   string // "file:line" of the declaration
	// Name is the interface name the configuration expects (set-name, a
	// literal match name, or the ID when nothing else says); "" when the
	// configuration only matches (by MAC or driver).
	Name        string
	MatchMAC    net.HardwareAddr
	MatchDriver string
	MatchName   string // a match name that is a glob
	DHCP4       bool
	DHCP6       bool
	Addresses   []DeclPrefix
	Gateways    []DeclAddr // default-route gateways, both families
	Nameservers []DeclAddr
	Search      []DeclString
	MTU         int
	MTUAt       string
	VLANID      int
	VLANLink    string // the ID (or name) of the VLAN's parent
	VLANAt      string
	Members     []string // bond or bridge members, as IDs or names
	MembersAt   string
	Optional    bool // netplan optional / ifupdown allow-hotplug: not required at boot
}

// Declared values carry the place they were declared at; the format
// readers under internal/parse return them.
type (
	// DeclPrefix is a declared address with its prefix length.
	DeclPrefix = netval.Prefix
	// DeclAddr is a declared IP address (gateway, nameserver); Metric is a
	// default route's declared metric, "" for the default.
	DeclAddr = netval.Addr
	// DeclString is a declared string (a search domain).
	DeclString = netval.String
)

// Label names the interface for messages: "eth0", or "eth0 (netplan ID
// lan)" when the name to expect differs from the configuration's ID.
func (d IntentIface) Label() string {
	switch {
	case d.Name == "":
		return d.ID
	case d.Name != d.ID && d.ID != "":
		return d.Name + " (" + d.ID + ")"
	}
	return d.Name
}

// Matches reports whether a live link answers the declaration: by MAC
// (current or permanent), driver and glob when it has a match, else by
// name.
func (d IntentIface) Matches(l netstate.Link, driver string) bool {
	if d.MatchMAC == nil && d.MatchDriver == "" && d.MatchName == "" {
		return d.Name != "" && l.Name == d.Name
	}
	if d.MatchMAC != nil && !netstate.MACEqual(l.MAC, d.MatchMAC) && !netstate.MACEqual(l.PermMAC, d.MatchMAC) {
		return false
	}
	if d.MatchDriver != "" && !globAny(d.MatchDriver, driver) {
		return false
	}
	if d.MatchName != "" && !globAny(d.MatchName, l.Name) {
		return false
	}
	if d.MatchMAC != nil && l.Kind != "device" && l.Kind != "veth" && l.Kind != "" {
		// A bond, bridge or VLAN inherits its members' MAC: a match by
		// MAC means the physical NIC.
		return false
	}
	return true
}

// globAny matches name against a space-separated list of shell globs, as
// netplan's match: driver and networkd's Driver= take them.
func globAny(globs, name string) bool {
	for _, g := range strings.Fields(globs) {
		if ok, err := path.Match(g, name); err == nil && ok {
			return true
		}
	}
	return false
}

// mergeIface folds a later declaration of the same interface into d: set
// values replace, lists are replaced when the later file sets them.
func mergeIface(d *IntentIface, n IntentIface) {
	if n.Name != "" {
		d.Name = n.Name
	}
	if n.MatchMAC != nil {
		d.MatchMAC = n.MatchMAC
	}
	if n.MatchDriver != "" {
		d.MatchDriver = n.MatchDriver
	}
	if n.MatchName != "" {
		d.MatchName = n.MatchName
	}
	d.DHCP4 = d.DHCP4 || n.DHCP4
	d.DHCP6 = d.DHCP6 || n.DHCP6
	if n.Addresses != nil {
		d.Addresses = n.Addresses
	}
	if n.Gateways != nil {
		d.Gateways = n.Gateways
	}
	if n.Nameservers != nil {
		d.Nameservers = n.Nameservers
	}
	if n.Search != nil {
		d.Search = n.Search
	}
	if n.MTU != 0 {
		d.MTU, d.MTUAt = n.MTU, n.MTUAt
	}
	if n.VLANID != 0 || n.VLANLink != "" {
		d.VLANID, d.VLANLink, d.VLANAt = n.VLANID, n.VLANLink, n.VLANAt
	}
	if n.Members != nil {
		d.Members, d.MembersAt = n.Members, n.MembersAt
	}
	d.Optional = d.Optional || n.Optional
}

// sortedUnique sorts and deduplicates strings (for comparing member lists).
func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
