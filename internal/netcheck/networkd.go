package netcheck

import (
	"net"
	"strings"
)

// NetworkdUnit is what network-identity takes from a systemd-networkd
// .network or .link file (drop-ins already appended).
type NetworkdUnit struct {
	File       string
	MatchMACs  []MACRef // [Match] MACAddress= / PermanentMACAddress=
	MatchNames []string // [Match] Name=
	LinkName   string   // [Link] Name= of a .link file
	DHCP       string   // [Network] DHCP=
	DHCPAt     string
	ClientID   string // [DHCPv4] ClientIdentifier=
	DUIDType4  string // [DHCPv4] DUIDType=
	DUIDType6  string // [DHCPv6] DUIDType=
}

// MACRef is a MAC address named by a configuration file, with its place.
type MACRef struct {
	MAC net.HardwareAddr
	At  string // "file:line"
}

// ParseNetworkdUnit interprets a parsed .network or .link file. Invalid
// MAC addresses in [Match] are problems.
func ParseNetworkdUnit(f INI) (NetworkdUnit, []Problem) {
	u := NetworkdUnit{File: f.File}
	var probs []Problem
	for _, key := range []string{"MACAddress", "PermanentMACAddress"} {
		for _, e := range f.All("Match", key) {
			if e.Value == "" {
				u.MatchMACs = nil // an empty assignment resets the list
				continue
			}
			for _, w := range strings.Fields(e.Value) {
				mac, err := net.ParseMAC(w)
				if err != nil {
					probs = append(probs, Problem{File: f.File, Line: e.Line, Msg: "[Match] " + key + "= " + quoteShort(w) + " is not a MAC address"})
					continue
				}
				u.MatchMACs = append(u.MatchMACs, MACRef{MAC: mac, At: loc(f.File, e.Line)})
			}
		}
	}
	for _, e := range f.All("Match", "Name") {
		u.MatchNames = append(u.MatchNames, strings.Fields(e.Value)...)
	}
	if e, ok := f.Get("Link", "Name"); ok {
		u.LinkName = e.Value
	}
	if e, ok := f.Get("Network", "DHCP"); ok {
		u.DHCP, u.DHCPAt = strings.ToLower(e.Value), loc(f.File, e.Line)
	}
	if e, ok := f.Get("DHCPv4", "ClientIdentifier"); ok {
		u.ClientID = strings.ToLower(e.Value)
	}
	if e, ok := f.Get("DHCPv4", "DUIDType"); ok {
		u.DUIDType4 = strings.ToLower(e.Value)
	}
	if e, ok := f.Get("DHCPv6", "DUIDType"); ok {
		u.DUIDType6 = strings.ToLower(e.Value)
	}
	return u, probs
}

// DHCPv4 reports whether the unit runs a DHCPv4 client.
func (u NetworkdUnit) DHCPv4() bool {
	switch u.DHCP {
	case "yes", "true", "on", "1", "ipv4", "both":
		return true
	}
	return false
}

// DHCPv6 reports whether the unit runs a DHCPv6 client.
func (u NetworkdUnit) DHCPv6() bool {
	switch u.DHCP {
	case "yes", "true", "on", "1", "ipv6", "both":
		return true
	}
	return false
}

// Name returns the interface the unit is about, for messages.
func (u NetworkdUnit) Name() string {
	if u.LinkName != "" {
		return u.LinkName
	}
	return strings.Join(u.MatchNames, " ")
}

// NetworkdConf holds the [DHCPv4]/[DHCPv6] DUIDType= of networkd.conf and
// its drop-ins: the default for every .network file.
type NetworkdConf struct {
	DUIDType4, DUIDType6 string
	At                   string
}

// Apply layers one parsed networkd.conf (or drop-in) over c.
func (c *NetworkdConf) Apply(f INI) {
	if e, ok := f.Get("DHCPv4", "DUIDType"); ok {
		c.DUIDType4, c.At = strings.ToLower(e.Value), loc(f.File, e.Line)
	}
	if e, ok := f.Get("DHCPv6", "DUIDType"); ok {
		c.DUIDType6, c.At = strings.ToLower(e.Value), loc(f.File, e.Line)
	}
}

// macDUID reports whether a DUIDType value derives the DUID from the
// interface's MAC address (DUID-LL or DUID-LLT) rather than from
// /etc/machine-id (the default, vendor, and uuid).
func macDUID(t string) bool {
	return t == "link-layer" || t == "link-layer-time" || strings.HasPrefix(t, "link-layer-time:")
}
