// Package nmconn reads NetworkManager connection profiles stored as
// keyfiles (nm-settings-keyfile(5), *.nmconnection): the settings
// guestcheck judges, with NetworkManager's meaning (a missing id is the
// file's name, a missing ipv4.method is "auto", the legacy MAC spelling
// "82;84;0;18;52;86;" and addressN=ADDR/LEN,GATEWAY). It works on a file
// already split into [group] key=value entries; the syntax itself is read
// by the caller. Parsing is pure: a bad value is a problem with file and
// line, and the rest of the profile is still read.
package nmconn

import (
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/networkd"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Entry is one key=value line of a keyfile, under its [group] (Section).
// It has the shape of the caller's INI reader's entries, so that they
// convert.
type Entry struct {
	Section, Key, Value string
	Line                int
	SectionLine         int // the line of the [group] header (not used here)
}

// Keyfile is a keyfile's entries in file order.
type Keyfile struct {
	File    string
	Entries []Entry
}

// get returns the value that wins for a key (GKeyFile keeps the last)
// when it is not empty.
func (k Keyfile) get(group, key string) (Entry, bool) {
	var e Entry
	for _, x := range k.Entries {
		if x.Section == group && x.Key == key {
			e = x
		}
	}
	return e, e.Value != ""
}

// Connection is one profile.
type Connection struct {
	File          string
	ID            string // connection.id, else the file's name without .nmconnection
	IDAt          string
	UUID          string
	Type          string // connection.type ("ethernet", "vlan", "bond", ...); "" when unset
	InterfaceName string
	Master        string // connection.master or .controller: a UUID or an interface name
	MasterAt      string
	MAC           *netval.MAC // [ethernet] mac-address: the profile applies only to that NIC
	// ClonedMAC is [ethernet] cloned-mac-address when it is an address
	// (not "permanent", "preserve", "random" or "stable"): the MAC the
	// NIC is given, the same on every copy of the profile.
	ClonedMAC  *netval.MAC
	MTU        int
	MTUAt      string
	VLANID     int
	VLANAt     string
	VLANParent string // a UUID or an interface name
	IPv4, IPv6 IP
}

// IP is an [ipv4] or [ipv6] group.
type IP struct {
	Method       string // as written; "" is "auto" for ipv4
	DHCPClientID string // [ipv4] dhcp-client-id, lower case
	DHCPClientAt string
	// Off is true for the methods that configure no address (disabled,
	// ignore, link-local): the rest of the group is not read.
	Off          bool
	NeverDefault bool
	Addresses    []netval.Prefix
	Gateway      *netval.Addr // gateway=, else the first addressN's gateway or default routeN
	DNS          []netval.Addr
	DNSSearch    []netval.String // without "~" routing-only domains
}

// DHCPv4 reports whether the profile runs a DHCPv4 client.
func (c Connection) DHCPv4() bool { return c.IPv4.Method == "" || c.IPv4.Method == "auto" }

// DHCPv6 reports whether the profile runs DHCPv6: "dhcp", and "auto" as
// router advertisements direct (netplan renders dhcp6: true that way).
func (c Connection) DHCPv6() bool { return c.IPv6.Method == "dhcp" || c.IPv6.Method == "auto" }

// MachineClientID reports whether the DHCPv4 client identifier derives
// from state a clone keeps (/etc/machine-id or NetworkManager's secret
// key): "duid", "ipv6-duid" and "stable". Unset means NetworkManager's
// default, which for its internal client is the MAC address.
func (c Connection) MachineClientID() bool {
	switch c.IPv4.DHCPClientID {
	case "duid", "ipv6-duid", "stable":
		return true
	}
	return false
}

// Parse reads one profile.
func Parse(k Keyfile) (Connection, []problem.Problem) {
	var probs []problem.Problem
	bad := func(line int, msg string) { probs = append(probs, problem.Problem{File: k.File, Line: line, Msg: msg}) }
	c := Connection{File: k.File, ID: strings.TrimSuffix(path.Base(k.File), ".nmconnection"), IDAt: netval.Loc(k.File, 1)}
	if e, ok := k.get("connection", "id"); ok {
		c.ID, c.IDAt = e.Value, netval.Loc(k.File, e.Line)
	}
	if e, ok := k.get("connection", "uuid"); ok {
		c.UUID = e.Value
	}
	if e, ok := k.get("connection", "type"); ok {
		c.Type = e.Value
	}
	if e, ok := k.get("connection", "interface-name"); ok {
		c.InterfaceName = e.Value
	}
	for _, key := range []string{"master", "controller"} {
		if e, ok := k.get("connection", key); ok {
			c.Master, c.MasterAt = e.Value, netval.Loc(k.File, e.Line)
		}
	}
	for _, g := range []string{"ethernet", "802-3-ethernet"} {
		if e, ok := k.get(g, "mac-address"); ok {
			if m, err := ParseMAC(e.Value); err == nil {
				c.MAC = &netval.MAC{MAC: m, At: netval.Loc(k.File, e.Line)}
			} else {
				bad(e.Line, "mac-address "+netval.Quote(e.Value)+" is not a MAC address")
			}
		}
		if e, ok := k.get(g, "cloned-mac-address"); ok {
			if m, err := ParseMAC(e.Value); err == nil {
				c.ClonedMAC = &netval.MAC{MAC: m, At: netval.Loc(k.File, e.Line)}
			}
		}
		if e, ok := k.get(g, "mtu"); ok {
			if n, err := strconv.Atoi(e.Value); err == nil && n >= 68 && n <= 65535 {
				c.MTU, c.MTUAt = n, netval.Loc(k.File, e.Line)
			} else if n != 0 {
				bad(e.Line, "mtu "+netval.Quote(e.Value)+" is not an MTU")
			}
		}
	}
	if c.Type == "vlan" {
		if e, ok := k.get("vlan", "id"); ok {
			n, err := strconv.Atoi(e.Value)
			if err != nil || n < 0 || n > 4094 {
				bad(e.Line, "vlan id "+netval.Quote(e.Value)+" is not a VLAN ID (0-4094)")
			} else {
				c.VLANID, c.VLANAt = n, netval.Loc(k.File, e.Line)
			}
		}
		if e, ok := k.get("vlan", "parent"); ok {
			c.VLANParent = e.Value
		}
	}
	c.IPv4 = parseIP(k, "ipv4", bad)
	c.IPv6 = parseIP(k, "ipv6", bad)
	return c, probs
}

func parseIP(k Keyfile, fam string, bad func(int, string)) IP {
	var ip IP
	at := func(e Entry) string { return netval.Loc(k.File, e.Line) }
	if e, ok := k.get(fam, "method"); ok {
		ip.Method = e.Value
	}
	if e, ok := k.get(fam, "dhcp-client-id"); ok && fam == "ipv4" {
		ip.DHCPClientID, ip.DHCPClientAt = strings.ToLower(e.Value), at(e)
	}
	if ip.Method == "disabled" || ip.Method == "ignore" || ip.Method == "link-local" {
		ip.Off = true
		return ip
	}
	if e, ok := k.get(fam, "never-default"); ok {
		ip.NeverDefault = e.Value == "true" || e.Value == "1" // GKeyFile's booleans
	}
	for _, e := range k.Entries {
		if e.Section != fam || !(e.Key == "addresses" || strings.HasPrefix(e.Key, "address")) {
			continue
		}
		for _, a := range strings.Split(strings.TrimSuffix(e.Value, ";"), ";") {
			pfx, g, _ := strings.Cut(a, ",")
			if pfx = strings.TrimSpace(pfx); pfx == "" {
				continue
			}
			p, err := netip.ParsePrefix(pfx)
			if err != nil {
				bad(e.Line, fam+" "+e.Key+" "+netval.Quote(pfx)+" is not an address with a prefix length")
				continue
			}
			ip.Addresses = append(ip.Addresses, netval.Prefix{Prefix: p, At: at(e)})
			if ga, err := netip.ParseAddr(strings.TrimSpace(g)); err == nil && ip.Gateway == nil {
				ip.Gateway = &netval.Addr{Addr: ga, At: at(e)}
			}
		}
	}
	// routeN=0.0.0.0/0,GATEWAY[,METRIC]: a default route (netplan renders
	// default routes this way).
	for _, e := range k.Entries {
		if e.Section != fam || !strings.HasPrefix(e.Key, "route") || strings.Contains(e.Key, "_") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimPrefix(e.Key, "route")); err != nil {
			continue
		}
		parts := strings.Split(e.Value, ",")
		if len(parts) < 2 || !isDefaultDst(strings.TrimSpace(parts[0])) {
			continue
		}
		if ga, err := netip.ParseAddr(strings.TrimSpace(parts[1])); err == nil && ip.Gateway == nil {
			ip.Gateway = &netval.Addr{Addr: ga, At: at(e)}
			if len(parts) > 2 {
				ip.Gateway.Metric = strings.TrimSpace(parts[2])
			}
		}
	}
	if e, ok := k.get(fam, "gateway"); ok {
		if ga, err := netip.ParseAddr(e.Value); err == nil {
			ip.Gateway = &netval.Addr{Addr: ga, At: at(e)}
		} else {
			bad(e.Line, fam+" gateway "+netval.Quote(e.Value)+" is not an IP address")
		}
	}
	sep := func(r rune) bool { return r == ';' || r == ',' || r == ' ' }
	if e, ok := k.get(fam, "dns"); ok {
		for _, w := range strings.FieldsFunc(e.Value, sep) {
			a, ok := networkd.DNSAddr(w) // NetworkManager takes resolved's server syntax
			if !ok {
				bad(e.Line, fam+" dns "+netval.Quote(w)+" is not an IP address")
				continue
			}
			ip.DNS = append(ip.DNS, netval.Addr{Addr: a, At: at(e)})
		}
	}
	if e, ok := k.get(fam, "dns-search"); ok {
		for _, w := range strings.FieldsFunc(e.Value, sep) {
			if !strings.HasPrefix(w, "~") {
				ip.DNSSearch = append(ip.DNSSearch, netval.String{Value: w, At: at(e)})
			}
		}
	}
	return ip
}

func isDefaultDst(s string) bool {
	switch s {
	case "0.0.0.0/0", "::/0", "0.0.0.0", "::", "default":
		return true
	}
	return false
}

// ParseMAC accepts "52:54:00:12:34:56", with an optional trailing ';'
// (older keyfiles), or the legacy list of decimal bytes "82;84;0;18;52;86;".
func ParseMAC(s string) (net.HardwareAddr, error) {
	s = strings.TrimSuffix(s, ";")
	if !strings.Contains(s, ";") {
		return net.ParseMAC(s)
	}
	parts := strings.Split(s, ";")
	if len(parts) != 6 {
		return nil, fmt.Errorf("want 6 bytes, got %d", len(parts))
	}
	mac := make(net.HardwareAddr, 6)
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 8)
		if err != nil {
			return nil, err
		}
		mac[i] = byte(v)
	}
	return mac, nil
}
