package netstate

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

// FixTakeover is the remediation for a default route that leaves through
// another NIC than the management one; routes and network-config both give
// it.
const FixTakeover = "Keep the default route on the management NIC: on the other NIC set netplan `dhcp4-overrides: {use-routes: false}` (or a higher `route-metric`), or NetworkManager `ipv4.never-default yes`"

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
		if Stacked(l.Kind) && l.ParentIndex != 0 && (l.ParentIndex == nic.Index || l.ParentIndex == h.Index) && l.Index != h.Index {
			out = append(out, l)
		}
	}
	return out
}

// Stacked reports whether a link type sits on a lower device
// (ParentIndex) and may carry that device's addresses.
func Stacked(kind string) bool {
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

// HolderSet returns the indexes of links that carry some NIC's addresses.
func (t *Topology) HolderSet() map[int]bool {
	m := map[int]bool{}
	for _, n := range t.NICs {
		for _, l := range t.nicLinks(n) {
			m[l.Index] = true
		}
	}
	return m
}

// FamilyAddrs returns nic's global addresses of family f that call for a
// default route. For IPv6, unique local addresses (fc00::/7) do not: a
// ULA-only network legitimately has no default route.
func (t *Topology) FamilyAddrs(nic Link, f Family) []Addr {
	var out []Addr
	for _, a := range t.NICAddrs(nic) {
		ip := a.Prefix.Addr()
		if FamilyOf(ip) == f && !(f == IPv6 && ip.IsPrivate()) {
			out = append(out, a)
		}
	}
	return out
}

// HasGlobal reports whether any NIC has an address of family f that calls
// for a default route.
func (t *Topology) HasGlobal(f Family) bool {
	for _, n := range t.NICs {
		if len(t.FamilyAddrs(n, f)) > 0 {
			return true
		}
	}
	return false
}

// Defaults returns the unicast default routes of family f in every table
// but local.
func (t *Topology) Defaults(f Family) []Route {
	var out []Route
	for _, r := range t.Snap.Routes {
		if r.Family == f && r.IsDefault() && r.Type == RouteUnicast && r.Table != TableLocal {
			out = append(out, r)
		}
	}
	return out
}

// GeneralTable returns the table whose default route carries traffic that
// no selective rule matches (an unbound socket's traffic): the first
// table, in rule order, consulted for "from all" whose default route the
// rule does not suppress. ok is false when no such table has a default.
// Without any rule (a kernel without policy routing) it is main.
func (t *Topology) GeneralTable(f Family, defaults []Route) (table int, ok bool) {
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
		if r.Selective || r.Goto || r.Table == 0 || r.Table == TableLocal || !AllPrefix(r.Src) || !AllPrefix(r.Dst) {
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

// RulesTo describes the rules that send traffic to table.
func (t *Topology) RulesTo(f Family, table int) []string {
	var out []string
	for _, r := range t.Snap.Rules {
		if r.Family == f && r.Table == table {
			out = append(out, describeRule(r))
		}
	}
	return out
}

// AllPrefix reports whether p matches every address (absent or /0).
func AllPrefix(p netip.Prefix) bool { return !p.IsValid() || p.Bits() == 0 }

// OnLink reports whether gw is directly reachable through link: inside a
// subnet of one of its addresses, or covered by a gateway-less route on it.
func (t *Topology) OnLink(link int, gw netip.Addr) bool {
	gw = gw.WithZone("")
	for _, a := range t.Snap.Addrs {
		if a.LinkIndex == link && a.Prefix.Masked().Contains(gw) {
			return true
		}
	}
	for _, r := range t.Snap.Routes {
		if r.Type != RouteUnicast || r.Table == TableLocal || len(r.Hops) != 1 {
			continue
		}
		h := r.Hops[0]
		if h.LinkIndex == link && !h.Gateway.IsValid() && r.Dst.Contains(gw) {
			return true
		}
	}
	return false
}

// TableName renders a routing table like ip-route does.
func TableName(n int) string {
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

// DescribeRoute renders r like ip-route: "default via 192.0.2.1 dev eth0
// table main metric 100 proto dhcp".
func (t *Topology) DescribeRoute(r Route) string {
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
	fmt.Fprintf(&b, " table %s metric %d proto %s", TableName(r.Table), r.Metric, protoName(r.Protocol))
	if r.Src.IsValid() {
		b.WriteString(" src " + r.Src.String())
	}
	return b.String()
}

func describeRule(r Rule) string {
	from := "all"
	if !AllPrefix(r.Src) {
		from = r.Src.String()
	}
	s := fmt.Sprintf("%d: from %s", r.Priority, from)
	if !AllPrefix(r.Dst) {
		s += " to " + r.Dst.String()
	}
	if r.Selective {
		s += " (with further selectors)"
	}
	return s + " lookup " + TableName(r.Table)
}

// DescribeRoutes renders routes like ip-route, one per line.
func (t *Topology) DescribeRoutes(rs []Route) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = t.DescribeRoute(r)
	}
	return strings.Join(s, "\n")
}

// MACEqual reports whether a is set and the same hardware address as b.
func MACEqual(a, b net.HardwareAddr) bool {
	return len(a) > 0 && strings.EqualFold(a.String(), b.String())
}

// HasSourceRule reports whether a rule selects traffic from a into a table.
func (t *Topology) HasSourceRule(a netip.Addr) bool {
	for _, r := range t.Snap.Rules {
		if r.Table != 0 && !r.Goto && !AllPrefix(r.Src) && r.Src.Contains(a) {
			return true
		}
	}
	return false
}

// AddrsOn returns the addresses on link.
func (t *Topology) AddrsOn(link int) []Addr {
	var out []Addr
	for _, a := range t.Snap.Addrs {
		if a.LinkIndex == link {
			out = append(out, a)
		}
	}
	return out
}

// AddrList renders addresses for a message, "none" for none.
func AddrList(as []Addr) string {
	if len(as) == 0 {
		return "none"
	}
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.Prefix.String()
	}
	return strings.Join(s, ", ")
}

// LinkList renders every link with its kind, for a message.
func (t *Topology) LinkList() string {
	var s []string
	for _, l := range t.Snap.Links {
		s = append(s, fmt.Sprintf("%s (%s)", l.Name, l.Kind))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
