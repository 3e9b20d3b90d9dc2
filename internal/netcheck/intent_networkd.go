package netcheck

import (
	"net"

	"github.com/guestcheck/guestcheck/internal/guestfile/netplan"
	"net/netip"
	"path"
	"strconv"
	"strings"
)

// NetworkdIntent turns parsed systemd-networkd .network and .netdev files
// (drop-ins already appended) into declared interfaces: one per .network
// file, named by its literal [Match] Name=, with its ID the file's stem.
// VLAN=, Bond= and Bridge= tie the files together; a .netdev gives the
// kind and the VLAN ID.
func NetworkdIntent(networks, netdevs []INI) ([]IntentIface, []Problem) {
	var probs []Problem
	bad := func(f INI, line int, msg string) { probs = append(probs, Problem{File: f.File, Line: line, Msg: msg}) }
	type netdev struct {
		kind, at string
		id       int
		mtu      int
		mtuAt    string
	}
	devs := map[string]netdev{}
	for _, f := range netdevs {
		e, ok := f.Get("NetDev", "Name")
		if !ok || e.Value == "" {
			continue
		}
		nd := netdev{at: loc(f.File, e.Line)}
		if k, ok := f.Get("NetDev", "Kind"); ok {
			nd.kind = k.Value
		}
		if v, ok := f.Get("VLAN", "Id"); ok {
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 0 || n > 4094 {
				bad(f, v.Line, "[VLAN] Id= "+quoteShort(v.Value)+" is not a VLAN ID (0-4094)")
			} else {
				nd.id = n
			}
		}
		if v, ok := f.Get("NetDev", "MTUBytes"); ok {
			if n, err := parseBytes(v.Value); err == nil {
				nd.mtu, nd.mtuAt = n, loc(f.File, v.Line)
			}
		}
		devs[e.Value] = nd
	}
	var out []IntentIface
	parentOf := map[string]string{}    // VLAN netdev name -> parent ID
	membersOf := map[string][]string{} // bond/bridge name -> member IDs
	membersAt := map[string]string{}
	for _, f := range networks {
		stem := strings.TrimSuffix(path.Base(f.File), ".network")
		d := IntentIface{ID: stem, Kind: KindEthernet, At: loc(f.File, 1)}
		var names []string
		for _, e := range f.All("Match", "Name") {
			if e.Value == "" {
				names = nil
				continue
			}
			names = append(names, strings.Fields(e.Value)...)
			d.At = loc(f.File, e.Line)
		}
		switch {
		case len(names) == 1 && !strings.ContainsAny(names[0], "*?[!"):
			d.Name = names[0]
		case len(names) > 0:
			d.MatchName = strings.Join(names, " ")
		}
		for _, key := range []string{"MACAddress", "PermanentMACAddress"} {
			for _, e := range f.All("Match", key) {
				for _, w := range strings.Fields(e.Value) {
					if m, err := net.ParseMAC(w); err == nil {
						d.MatchMAC = m
					} else {
						bad(f, e.Line, "[Match] "+key+"= "+quoteShort(w)+" is not a MAC address")
					}
				}
			}
		}
		if e, ok := f.Get("Match", "Driver"); ok {
			d.MatchDriver = e.Value
		}
		if e, ok := f.Get("Network", "DHCP"); ok {
			u := NetworkdUnit{DHCP: strings.ToLower(e.Value)}
			d.DHCP4, d.DHCP6 = u.DHCPv4(), u.DHCPv6()
		}
		addrs := append(f.All("Network", "Address"), f.All("Address", "Address")...)
		for _, e := range addrs {
			p, err := netip.ParsePrefix(e.Value)
			if err != nil {
				bad(f, e.Line, "Address= "+quoteShort(e.Value)+" is not an address with a prefix length")
				continue
			}
			d.Addresses = append(d.Addresses, DeclPrefix{Prefix: p, At: loc(f.File, e.Line)})
		}
		for _, e := range f.All("Network", "Gateway") {
			if a, err := netip.ParseAddr(e.Value); err == nil {
				d.Gateways = append(d.Gateways, DeclAddr{Addr: a, At: loc(f.File, e.Line)})
			} else if e.Value != "_dhcp4" && e.Value != "_ipv6ra" {
				bad(f, e.Line, "Gateway= "+quoteShort(e.Value)+" is not an IP address")
			}
		}
		d.Gateways = append(d.Gateways, networkdRouteGateways(f, bad)...)
		for _, e := range f.All("Network", "DNS") {
			for _, w := range strings.Fields(e.Value) {
				a, ok := networkdDNSAddr(w)
				if !ok {
					bad(f, e.Line, "DNS= "+quoteShort(w)+" is not an IP address")
					continue
				}
				d.Nameservers = append(d.Nameservers, DeclAddr{Addr: a, At: loc(f.File, e.Line)})
			}
		}
		for _, e := range f.All("Network", "Domains") {
			for _, w := range strings.Fields(e.Value) {
				if !strings.HasPrefix(w, "~") { // "~x" routes queries, it is no search domain
					d.Search = append(d.Search, DeclString{Value: w, At: loc(f.File, e.Line)})
				}
			}
		}
		if e, ok := f.Get("Link", "MTUBytes"); ok {
			n, err := parseBytes(e.Value)
			if err != nil || n < 68 || n > 65535 {
				bad(f, e.Line, "MTUBytes= "+quoteShort(e.Value)+" is not an MTU")
			} else {
				d.MTU, d.MTUAt = n, loc(f.File, e.Line)
			}
		}
		if e, ok := f.Get("Link", "RequiredForOnline"); ok && strings.EqualFold(e.Value, "no") {
			d.Optional = true
		}
		for _, e := range f.All("Network", "VLAN") {
			for _, v := range strings.Fields(e.Value) {
				parentOf[v] = stem
			}
		}
		for _, key := range []string{"Bond", "Bridge"} {
			if e, ok := f.Get("Network", key); ok && e.Value != "" {
				membersOf[e.Value] = append(membersOf[e.Value], stem)
				if membersAt[e.Value] == "" {
					membersAt[e.Value] = loc(f.File, e.Line)
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
		switch nd.kind {
		case "vlan":
			d.Kind, d.VLANID, d.VLANAt, d.VLANLink = KindVLAN, nd.id, nd.at, parentOf[d.Name]
		case "bond":
			d.Kind = KindBond
		case "bridge":
			d.Kind = KindBridge
		}
		if d.MTU == 0 && nd.mtu != 0 {
			d.MTU, d.MTUAt = nd.mtu, nd.mtuAt
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

// networkdRouteGateways returns the gateways of [Route] sections that are
// default routes of the main table. Each [Route] section is its own
// route: entries are grouped by the section header they follow.
func networkdRouteGateways(f INI, bad func(INI, int, string)) []DeclAddr {
	var out []DeclAddr
	var gw *INIEntry
	dst, table, metric := "", "", ""
	flush := func() {
		if gw != nil && (dst == "" || netplan.IsDefaultDst(dst)) && (table == "" || table == "main" || table == "254") {
			if a, err := netip.ParseAddr(gw.Value); err == nil {
				out = append(out, DeclAddr{Addr: a, At: loc(f.File, gw.Line), Metric: metric})
			} else if !strings.HasPrefix(gw.Value, "_") {
				bad(f, gw.Line, "[Route] Gateway= "+quoteShort(gw.Value)+" is not an IP address")
			}
		}
		gw, dst, table, metric = nil, "", "", ""
	}
	section := -1
	for i, e := range f.Entries {
		if e.Section != "Route" {
			continue
		}
		if e.SectionLine != section {
			flush()
			section = e.SectionLine
		}
		switch e.Key {
		case "Gateway":
			gw = &f.Entries[i]
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

// networkdDNSAddr reads a DNS= word: "192.0.2.53", "192.0.2.53:53",
// "[2001:db8::53]:53", with an optional "%ifname" and "#server-name".
func networkdDNSAddr(w string) (netip.Addr, bool) {
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
		return networkdDNSAddr(w[:i])
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
