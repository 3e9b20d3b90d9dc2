package netcheck

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Topology indexes a Snapshot for judging.
type Topology struct {
	Snap    Snapshot
	byIndex map[int]Link
	// NICs are the VM's network cards (IsNIC), in interface-index order,
	// which on KubeVirt and Harvester is the order of the VM's interfaces.
	NICs []Link
}

// NewTopology indexes s. Link.Device must already be set (MarkDevices).
func NewTopology(s Snapshot) *Topology {
	t := &Topology{Snap: s, byIndex: make(map[int]Link, len(s.Links))}
	for _, l := range s.Links {
		t.byIndex[l.Index] = l
		if IsNIC(l) {
			t.NICs = append(t.NICs, l)
		}
	}
	slices.SortFunc(t.NICs, func(a, b Link) int { return a.Index - b.Index })
	return t
}

// Link returns the link with index i.
func (t *Topology) Link(i int) (Link, bool) {
	l, ok := t.byIndex[i]
	return l, ok
}

// Name returns the name of link i, or "if<i>" for an unknown index.
func (t *Topology) Name(i int) string {
	if l, ok := t.byIndex[i]; ok {
		return l.Name
	}
	return "if" + strconv.Itoa(i)
}

// Holder returns the link that carries l's addresses: the bridge or bond
// l is a port of (followed upwards), or l itself.
func (t *Topology) Holder(l Link) Link {
	for range 8 { // bounded: a master loop must not hang the check
		m, ok := t.byIndex[l.MasterIndex]
		if l.MasterIndex == 0 || !ok {
			break
		}
		l = m
	}
	return l
}

// nicLinks returns the links whose addresses belong to nic: its holder
// and the VLANs (or macvlans) stacked on the NIC or on its holder.
func (t *Topology) nicLinks(nic Link) []Link {
	h := t.Holder(nic)
	out := []Link{h}
	for _, l := range t.Snap.Links {
		// Only stacked types: a veth's parent index names its peer, which
		// may even be an index in another namespace.
		if stacked(l.Kind) && l.ParentIndex != 0 && (l.ParentIndex == nic.Index || l.ParentIndex == h.Index) && l.Index != h.Index {
			out = append(out, l)
		}
	}
	return out
}

// stacked reports whether a link type sits on a lower device
// (ParentIndex) and may carry that device's addresses.
func stacked(kind string) bool {
	switch kind {
	case "vlan", "macvlan", "macvtap", "ipvlan":
		return true
	}
	return false
}

// NICAddrs returns the global addresses that nic carries, on its holder
// or on VLANs stacked on it.
func (t *Topology) NICAddrs(nic Link) []Addr {
	var out []Addr
	for _, l := range t.nicLinks(nic) {
		for _, a := range t.Snap.Addrs {
			if a.LinkIndex == l.Index && a.Global() {
				out = append(out, a)
			}
		}
	}
	return out
}

// holderSet returns the indexes of links that carry some NIC's addresses.
func (t *Topology) holderSet() map[int]bool {
	m := map[int]bool{}
	for _, n := range t.NICs {
		for _, l := range t.nicLinks(n) {
			m[l.Index] = true
		}
	}
	return m
}

// familyAddrs returns nic's global addresses of family f that call for a
// default route. For IPv6, unique local addresses (fc00::/7) do not: a
// ULA-only network legitimately has no default route.
func (t *Topology) familyAddrs(nic Link, f Family) []Addr {
	var out []Addr
	for _, a := range t.NICAddrs(nic) {
		ip := a.Prefix.Addr()
		if familyOf(ip) == f && !(f == IPv6 && ip.IsPrivate()) {
			out = append(out, a)
		}
	}
	return out
}

// hasGlobal reports whether any NIC has an address of family f that calls
// for a default route.
func (t *Topology) hasGlobal(f Family) bool {
	for _, n := range t.NICs {
		if len(t.familyAddrs(n, f)) > 0 {
			return true
		}
	}
	return false
}

// defaults returns the unicast default routes of family f in every table
// but local.
func (t *Topology) defaults(f Family) []Route {
	var out []Route
	for _, r := range t.Snap.Routes {
		if r.Family == f && r.IsDefault() && r.Type == routeUnicast && r.Table != TableLocal {
			out = append(out, r)
		}
	}
	return out
}

// generalTable returns the table whose default route carries traffic that
// no selective rule matches (an unbound socket's traffic): the first
// table, in rule order, consulted for "from all" whose default route the
// rule does not suppress. ok is false when no such table has a default.
// Without any rule (a kernel without policy routing) it is main.
func (t *Topology) generalTable(f Family, defaults []Route) (table int, ok bool) {
	has := map[int]bool{}
	for _, r := range defaults {
		has[r.Table] = true
	}
	var rules []Rule
	for _, r := range t.Snap.Rules {
		if r.Family == f {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return TableMain, has[TableMain]
	}
	slices.SortStableFunc(rules, func(a, b Rule) int { return a.Priority - b.Priority })
	for _, r := range rules {
		if r.Selective || r.Goto || r.Table == 0 || r.Table == TableLocal || !allPrefix(r.Src) || !allPrefix(r.Dst) {
			continue
		}
		if r.SuppressPrefixlen >= 0 {
			continue // suppress_prefixlength N >= 0 hides every default route
		}
		if has[r.Table] {
			return r.Table, true
		}
	}
	return TableMain, false
}

// rulesTo describes the rules that send traffic to table.
func (t *Topology) rulesTo(f Family, table int) []string {
	var out []string
	for _, r := range t.Snap.Rules {
		if r.Family == f && r.Table == table {
			out = append(out, describeRule(r))
		}
	}
	return out
}

func allPrefix(p netip.Prefix) bool { return !p.IsValid() || p.Bits() == 0 }

// onLink reports whether gw is directly reachable through link: inside a
// subnet of one of its addresses, or covered by a gateway-less route on it.
func (t *Topology) onLink(link int, gw netip.Addr) bool {
	gw = gw.WithZone("")
	for _, a := range t.Snap.Addrs {
		if a.LinkIndex == link && a.Prefix.Masked().Contains(gw) {
			return true
		}
	}
	for _, r := range t.Snap.Routes {
		if r.Type != routeUnicast || r.Table == TableLocal || len(r.Hops) != 1 {
			continue
		}
		h := r.Hops[0]
		if h.LinkIndex == link && !h.Gateway.IsValid() && r.Dst.Contains(gw) {
			return true
		}
	}
	return false
}

// tableName renders a routing table like ip-route does.
func tableName(n int) string {
	switch n {
	case TableMain:
		return "main"
	case TableLocal:
		return "local"
	case TableDefault:
		return "default"
	}
	return strconv.Itoa(n)
}

func protoName(p int) string {
	switch p {
	case unix.RTPROT_KERNEL:
		return "kernel"
	case unix.RTPROT_BOOT:
		return "boot"
	case unix.RTPROT_STATIC:
		return "static"
	case unix.RTPROT_RA:
		return "ra"
	case unix.RTPROT_DHCP:
		return "dhcp"
	}
	return strconv.Itoa(p)
}

// describeRoute renders r like ip-route: "default via 192.0.2.1 dev eth0
// table main metric 100 proto dhcp".
func (t *Topology) describeRoute(r Route) string {
	var b strings.Builder
	if r.IsDefault() {
		b.WriteString("default")
	} else {
		b.WriteString(r.Dst.String())
	}
	for i, h := range r.Hops {
		if len(r.Hops) > 1 {
			fmt.Fprintf(&b, " nexthop%d", i+1)
		}
		if h.Gateway.IsValid() {
			b.WriteString(" via " + h.Gateway.String())
		}
		b.WriteString(" dev " + t.Name(h.LinkIndex))
		if h.OnLink {
			b.WriteString(" onlink")
		}
		if h.LinkDown {
			b.WriteString(" linkdown")
		}
	}
	fmt.Fprintf(&b, " table %s metric %d proto %s", tableName(r.Table), r.Metric, protoName(r.Protocol))
	if r.Src.IsValid() {
		b.WriteString(" src " + r.Src.String())
	}
	return b.String()
}

func describeRule(r Rule) string {
	from := "all"
	if !allPrefix(r.Src) {
		from = r.Src.String()
	}
	s := fmt.Sprintf("%d: from %s", r.Priority, from)
	if !allPrefix(r.Dst) {
		s += " to " + r.Dst.String()
	}
	if r.Selective {
		s += " (with further selectors)"
	}
	return s + " lookup " + tableName(r.Table)
}

func (t *Topology) describeRoutes(rs []Route) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = t.describeRoute(r)
	}
	return strings.Join(s, "\n")
}

func macEqual(a, b net.HardwareAddr) bool {
	return len(a) > 0 && strings.EqualFold(a.String(), b.String())
}
