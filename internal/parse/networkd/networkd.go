// Package networkd reads systemd-networkd's configuration as
// systemd.network(5), systemd.link(5), systemd.netdev(5) and
// networkd.conf(5) define it: the settings guestcheck judges, with
// systemd's rules (the last assignment of a single-value setting wins, an
// empty assignment resets a list). It works on a unit already split into
// assignments, its drop-ins appended; the INI-style syntax itself is read
// by the caller. Parsing is pure: a bad value is a problem with file and
// line, and the rest of the unit is still read.
package networkd

import (
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Entry is one assignment of a unit file.
type Entry struct {
	Section, Key, Value string
	Line                int
	// SectionLine is the line of the [section] header the entry follows,
	// which tells repeated sections ([Route], [Address]) apart.
	SectionLine int
}

// Unit is a unit file's assignments in file order, its drop-ins'
// appended after them.
type Unit struct {
	File    string
	Entries []Entry
}

// all returns every assignment of key in section, in order.
func (u Unit) all(section, key string) []Entry {
	var out []Entry
	for _, x := range u.Entries {
		if x.Section == section && x.Key == key {
			out = append(out, x)
		}
	}
	return out
}

// last returns the assignment that wins for a single-value setting.
func (u Unit) last(section, key string) (Entry, bool) {
	es := u.all(section, key)
	if len(es) == 0 {
		return Entry{}, false
	}
	return es[len(es)-1], true
}

// words returns the words of a list setting, honouring resets.
func (u Unit) words(section, key string) []Word {
	var out []Word
	for _, e := range u.all(section, key) {
		if e.Value == "" {
			out = nil // an empty assignment resets the list
			continue
		}
		for _, w := range strings.Fields(e.Value) {
			out = append(out, Word{Value: w, Line: e.Line})
		}
	}
	return out
}

// Word is one word of a list setting and its line.
type Word struct {
	Value string
	Line  int
}

type problems struct {
	file string
	list []problem.Problem
}

func (p *problems) bad(line int, msg string) {
	p.list = append(p.list, problem.Problem{File: p.file, Line: line, Msg: msg})
}

// Match is a [Match] section.
type Match struct {
	MACs   []netval.MAC // MACAddress= and PermanentMACAddress=
	Names  []string     // Name=
	NameAt string       // the last non-empty Name=
	Driver string       // Driver=
}

// Network is what guestcheck reads of a .network file.
type Network struct {
	File   string
	Match  Match
	DHCP   string // [Network] DHCP=, lower case
	DHCPAt string
	// ClientID is [DHCPv4] ClientIdentifier= and DUIDType4/6 the
	// DUIDType= of [DHCPv4] and [DHCPv6], lower case; "" when unset.
	ClientID             string
	DUIDType4, DUIDType6 string
	Addresses            []netval.Prefix // [Network] Address= and [Address] Address=
	Gateways             []netval.Addr   // Gateway= and default routes of the main table
	DNS                  []netval.Addr
	Domains              []netval.String // search domains; "~domain" routes only and is left out
	MTU                  int             // [Link] MTUBytes=
	MTUAt                string
	Optional             bool     // [Link] RequiredForOnline=no
	VLANs                []string // [Network] VLAN=
	Bond, Bridge         string   // [Network] Bond=, Bridge=
	BondAt, BridgeAt     string
}

// DHCPv4 reports whether the unit runs a DHCPv4 client.
func (n Network) DHCPv4() bool {
	switch n.DHCP {
	case "yes", "true", "on", "1", "ipv4", "both":
		return true
	}
	return false
}

// DHCPv6 reports whether the unit runs a DHCPv6 client.
func (n Network) DHCPv6() bool {
	switch n.DHCP {
	case "yes", "true", "on", "1", "ipv6", "both":
		return true
	}
	return false
}

// ParseNetwork reads a .network unit.
func ParseNetwork(u Unit) (Network, []problem.Problem) {
	p := &problems{file: u.File}
	n := Network{File: u.File, Match: parseMatch(u, p)}
	if e, ok := u.last("Network", "DHCP"); ok {
		n.DHCP, n.DHCPAt = strings.ToLower(e.Value), netval.Loc(u.File, e.Line)
	}
	if e, ok := u.last("DHCPv4", "ClientIdentifier"); ok {
		n.ClientID = strings.ToLower(e.Value)
	}
	if e, ok := u.last("DHCPv4", "DUIDType"); ok {
		n.DUIDType4 = strings.ToLower(e.Value)
	}
	if e, ok := u.last("DHCPv6", "DUIDType"); ok {
		n.DUIDType6 = strings.ToLower(e.Value)
	}
	for _, e := range append(u.all("Network", "Address"), u.all("Address", "Address")...) {
		pr, err := netip.ParsePrefix(e.Value)
		if err != nil {
			p.bad(e.Line, "Address= "+netval.Quote(e.Value)+" is not an address with a prefix length")
			continue
		}
		n.Addresses = append(n.Addresses, netval.Prefix{Prefix: pr, At: netval.Loc(u.File, e.Line)})
	}
	for _, e := range u.all("Network", "Gateway") {
		if a, err := netip.ParseAddr(e.Value); err == nil {
			n.Gateways = append(n.Gateways, netval.Addr{Addr: a, At: netval.Loc(u.File, e.Line)})
		} else if e.Value != "_dhcp4" && e.Value != "_ipv6ra" {
			p.bad(e.Line, "Gateway= "+netval.Quote(e.Value)+" is not an IP address")
		}
	}
	n.Gateways = append(n.Gateways, routeGateways(u, p)...)
	for _, w := range u.words("Network", "DNS") {
		a, ok := DNSAddr(w.Value)
		if !ok {
			p.bad(w.Line, "DNS= "+netval.Quote(w.Value)+" is not an IP address")
			continue
		}
		n.DNS = append(n.DNS, netval.Addr{Addr: a, At: netval.Loc(u.File, w.Line)})
	}
	for _, w := range u.words("Network", "Domains") {
		if !strings.HasPrefix(w.Value, "~") { // "~x" routes queries, it is no search domain
			n.Domains = append(n.Domains, netval.String{Value: w.Value, At: netval.Loc(u.File, w.Line)})
		}
	}
	if e, ok := u.last("Link", "MTUBytes"); ok {
		v, err := parseBytes(e.Value)
		if err != nil || v < 68 || v > 65535 {
			p.bad(e.Line, "MTUBytes= "+netval.Quote(e.Value)+" is not an MTU")
		} else {
			n.MTU, n.MTUAt = v, netval.Loc(u.File, e.Line)
		}
	}
	if e, ok := u.last("Link", "RequiredForOnline"); ok && strings.EqualFold(e.Value, "no") {
		n.Optional = true
	}
	for _, w := range u.words("Network", "VLAN") {
		n.VLANs = append(n.VLANs, w.Value)
	}
	if e, ok := u.last("Network", "Bond"); ok && e.Value != "" {
		n.Bond, n.BondAt = e.Value, netval.Loc(u.File, e.Line)
	}
	if e, ok := u.last("Network", "Bridge"); ok && e.Value != "" {
		n.Bridge, n.BridgeAt = e.Value, netval.Loc(u.File, e.Line)
	}
	return n, p.list
}

func parseMatch(u Unit, p *problems) Match {
	var m Match
	for _, key := range []string{"MACAddress", "PermanentMACAddress"} {
		for _, w := range u.words("Match", key) {
			mac, err := net.ParseMAC(w.Value)
			if err != nil {
				p.bad(w.Line, "[Match] "+key+"= "+netval.Quote(w.Value)+" is not a MAC address")
				continue
			}
			m.MACs = append(m.MACs, netval.MAC{MAC: mac, At: netval.Loc(u.File, w.Line)})
		}
	}
	for _, w := range u.words("Match", "Name") {
		m.Names = append(m.Names, w.Value)
		m.NameAt = netval.Loc(u.File, w.Line)
	}
	if e, ok := u.last("Match", "Driver"); ok {
		m.Driver = e.Value
	}
	return m
}

// routeGateways returns the gateways of [Route] sections that are
// default routes of the main table. Each [Route] section is its own
// route: entries are grouped by the section header they follow.
func routeGateways(u Unit, p *problems) []netval.Addr {
	var out []netval.Addr
	var gw *Entry
	dst, table, metric := "", "", ""
	flush := func() {
		if gw != nil && (dst == "" || isDefaultDst(dst)) && (table == "" || table == "main" || table == "254") {
			if a, err := netip.ParseAddr(gw.Value); err == nil {
				out = append(out, netval.Addr{Addr: a, At: netval.Loc(u.File, gw.Line), Metric: metric})
			} else if !strings.HasPrefix(gw.Value, "_") {
				p.bad(gw.Line, "[Route] Gateway= "+netval.Quote(gw.Value)+" is not an IP address")
			}
		}
		gw, dst, table, metric = nil, "", "", ""
	}
	section := -1
	for i, e := range u.Entries {
		if e.Section != "Route" {
			continue
		}
		if e.SectionLine != section {
			flush()
			section = e.SectionLine
		}
		switch e.Key {
		case "Gateway":
			gw = &u.Entries[i]
		case "Destination":
			dst = e.Value
		case "Table":
			table = e.Value
		case "Metric":
			metric = e.Value
		}
	}
	flush()
	return out
}

func isDefaultDst(s string) bool {
	switch s {
	case "0.0.0.0/0", "::/0", "0.0.0.0", "::":
		return true
	}
	return false
}

// Link is what guestcheck reads of a .link file.
type Link struct {
	File  string
	Match Match
	Name  string // [Link] Name=
}

// ParseLink reads a .link unit.
func ParseLink(u Unit) (Link, []problem.Problem) {
	p := &problems{file: u.File}
	l := Link{File: u.File, Match: parseMatch(u, p)}
	if e, ok := u.last("Link", "Name"); ok {
		l.Name = e.Value
	}
	return l, p.list
}

// NetDev is what guestcheck reads of a .netdev file.
type NetDev struct {
	File   string
	Name   string // [NetDev] Name=; "" when unset
	NameAt string
	Kind   string // [NetDev] Kind=: "vlan", "bond", "bridge", ...
	VLANID int    // [VLAN] Id=
	MTU    int    // [NetDev] MTUBytes=
	MTUAt  string
}

// ParseNetDev reads a .netdev unit.
func ParseNetDev(u Unit) (NetDev, []problem.Problem) {
	p := &problems{file: u.File}
	d := NetDev{File: u.File}
	if e, ok := u.last("NetDev", "Name"); ok {
		d.Name, d.NameAt = e.Value, netval.Loc(u.File, e.Line)
	}
	if e, ok := u.last("NetDev", "Kind"); ok {
		d.Kind = e.Value
	}
	if e, ok := u.last("VLAN", "Id"); ok {
		v, err := strconv.Atoi(e.Value)
		if err != nil || v < 0 || v > 4094 {
			p.bad(e.Line, "[VLAN] Id= "+netval.Quote(e.Value)+" is not a VLAN ID (0-4094)")
		} else {
			d.VLANID = v
		}
	}
	if e, ok := u.last("NetDev", "MTUBytes"); ok {
		if v, err := parseBytes(e.Value); err == nil {
			d.MTU, d.MTUAt = v, netval.Loc(u.File, e.Line)
		}
	}
	return d, p.list
}

// Conf holds the [DHCPv4] and [DHCPv6] DUIDType= and DUIDRawData= of
// networkd.conf and its drop-ins: the default for every .network file.
type Conf struct {
	DUIDType4, DUIDType6 string
	At                   string // the last DUIDType= that applied
	// DUIDRaw4 and DUIDRaw6 are DUIDRawData=, as written: a DUID every
	// machine with this configuration presents (with the DUID type).
	DUIDRaw4, DUIDRaw6 string
	RawAt              string // the last DUIDRawData= that applied
}

// Apply layers one networkd.conf (or drop-in) over c, as networkd reads
// them in order.
func (c *Conf) Apply(u Unit) {
	if e, ok := u.last("DHCPv4", "DUIDType"); ok {
		c.DUIDType4, c.At = strings.ToLower(e.Value), netval.Loc(u.File, e.Line)
	}
	if e, ok := u.last("DHCPv6", "DUIDType"); ok {
		c.DUIDType6, c.At = strings.ToLower(e.Value), netval.Loc(u.File, e.Line)
	}
	if e, ok := u.last("DHCPv4", "DUIDRawData"); ok {
		c.DUIDRaw4, c.RawAt = strings.ToLower(strings.TrimSpace(e.Value)), netval.Loc(u.File, e.Line)
	}
	if e, ok := u.last("DHCPv6", "DUIDRawData"); ok {
		c.DUIDRaw6, c.RawAt = strings.ToLower(strings.TrimSpace(e.Value)), netval.Loc(u.File, e.Line)
	}
}

// RawDUID is the DUID a DUIDRawData= value pins: the DUIDType= code in
// two bytes, then the data (networkd.conf(5)); ok is false when either
// cannot be read.
func RawDUID(duidType, raw string) (duid []byte, ok bool) {
	code := map[string]uint16{"": 2, "vendor": 2, "link-layer-time": 1, "link-layer": 3, "uuid": 4}
	t, known := code[duidType]
	if !known {
		if strings.HasPrefix(duidType, "link-layer-time:") {
			t = 1
		} else if n, err := strconv.ParseUint(duidType, 10, 16); err == nil {
			t = uint16(n)
		} else {
			return nil, false
		}
	}
	bs := strings.Split(raw, ":")
	if raw == "" || len(bs) > 128 {
		return nil, false
	}
	out := []byte{byte(t >> 8), byte(t)}
	for _, b := range bs {
		v, err := strconv.ParseUint(b, 16, 8)
		if err != nil || len(b) > 2 {
			return nil, false
		}
		out = append(out, byte(v))
	}
	return out, true
}

// MACDUID reports whether a DUIDType= value derives the DUID from the
// interface's MAC address (DUID-LL or DUID-LLT) rather than from
// /etc/machine-id (the default, vendor, and uuid).
func MACDUID(t string) bool {
	return t == "link-layer" || t == "link-layer-time" || strings.HasPrefix(t, "link-layer-time:")
}

// DNSAddr reads a DNS server as resolved and networkd write it:
// "192.0.2.53", "192.0.2.53:53", "[2001:db8::53]:53", with an optional
// "%ifname" and "#server-name".
func DNSAddr(w string) (netip.Addr, bool) {
	if i := strings.IndexByte(w, '#'); i >= 0 {
		w = w[:i]
	}
	if a, err := netip.ParseAddr(w); err == nil {
		return a.WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(w); err == nil {
		return ap.Addr().WithZone(""), true
	}
	if i := strings.IndexByte(w, '%'); i >= 0 {
		return DNSAddr(w[:i])
	}
	return netip.Addr{}, false
}

// parseBytes reads a systemd size such as "1500" or "9K" (base 1024).
func parseBytes(s string) (int, error) {
	mult := 1
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1024, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1024*1024, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}
