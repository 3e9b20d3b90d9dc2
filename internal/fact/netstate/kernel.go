package netstate

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Family is an address family.
type Family int

// The address families the checks judge.
const (
	IPv4 Family = unix.AF_INET
	IPv6 Family = unix.AF_INET6
)

// String names the family for messages ("IPv4", "IPv6").
func (f Family) String() string {
	if f == IPv6 {
		return "IPv6"
	}
	return "IPv4"
}

// FamilyOf returns the family of a.
func FamilyOf(a netip.Addr) Family {
	if a.Is4() || a.Is4In6() {
		return IPv4
	}
	return IPv6
}

// Well-known routing tables and route types.
const (
	TableMain    = unix.RT_TABLE_MAIN
	TableLocal   = unix.RT_TABLE_LOCAL
	TableDefault = unix.RT_TABLE_DEFAULT
	RouteUnicast = unix.RTN_UNICAST
)

// Link is a network interface as the checks see it.
type Link struct {
	Index       int
	Name        string
	Kind        string // netlink type: "device", "veth", "bridge", "bond", "vlan", "tuntap", ...
	Encap       string // link-layer type: "ether", "loopback", "none", ...
	MAC         net.HardwareAddr
	PermMAC     net.HardwareAddr // the permanent (burnt-in) address when the driver reports one
	MasterIndex int              // bridge or bond this link is a port of
	ParentIndex int              // lower device of a VLAN or macvlan
	AdminUp     bool             // IFF_UP
	LowerUp     bool             // carrier (IFF_LOWER_UP)
	MTU         int
	VLANID      int // the 802.1Q ID of a "vlan" link
	// Device is true when /sys/class/net/<name>/device exists: the link is
	// backed by a (possibly emulated) PCI, virtio or platform device.
	Device bool
}

// Up reports whether the link is administratively up with carrier.
func (l Link) Up() bool { return l.AdminUp && l.LowerUp }

// Addr is an address assigned to a link.
type Addr struct {
	LinkIndex int
	Prefix    netip.Prefix // the address with its prefix length
	Scope     int          // unix.RT_SCOPE_*
	Secondary bool
	Tentative bool // IPv6 duplicate address detection still running or failed
	// Dynamic is true when the address has a finite lifetime, as a DHCP
	// lease or an IPv6 autoconfigured address has; static ones are forever.
	Dynamic bool
}

// Global reports whether the address is usable beyond the link: universe
// scope, not link-local, not loopback.
func (a Addr) Global() bool {
	ip := a.Prefix.Addr()
	return a.Scope == unix.RT_SCOPE_UNIVERSE && !ip.IsLinkLocalUnicast() && !ip.IsLoopback() && !a.Tentative
}

// Hop is one next hop of a route.
type Hop struct {
	LinkIndex int
	Gateway   netip.Addr // invalid when the destination is on-link
	OnLink    bool       // the "onlink" flag: the gateway is declared reachable
	LinkDown  bool       // the kernel marked the hop's link as down
}

// Route is a routing table entry.
type Route struct {
	Family   Family
	Table    int
	Dst      netip.Prefix // 0.0.0.0/0 or ::/0 for a default route
	Src      netip.Addr   // preferred source, when set
	Metric   int
	Type     int // unix.RTN_*
	Protocol int // unix.RTPROT_*: who installed it (dhcp, ra, static, kernel)
	Scope    int
	Hops     []Hop // one for a plain route, several for multipath
}

// IsDefault reports whether r is a default route.
func (r Route) IsDefault() bool { return r.Dst.IsValid() && r.Dst.Bits() == 0 }

// Rule is a policy-routing rule (ip rule).
type Rule struct {
	Family   Family
	Priority int
	Table    int          // 0 for rules whose action is not a lookup
	Src      netip.Prefix // invalid or /0: from all
	Dst      netip.Prefix
	// Selective is true when the rule matches on more than addresses
	// (fwmark, interfaces, TOS, ports, uid, protocol) or is inverted, so it
	// does not apply to all traffic from Src.
	Selective bool
	// SuppressPrefixlen, when >= 0, makes the lookup ignore routes whose
	// prefix is that long or shorter (wireguard's "suppress_prefixlength 0").
	SuppressPrefixlen int
	Goto              bool
}

// Neigh is a neighbour (ARP or NDP) cache entry.
type Neigh struct {
	LinkIndex int
	IP        netip.Addr
	State     int // netlink.NUD_*
}

// Failed reports whether resolution of the neighbour failed.
func (n Neigh) Failed() bool { return n.State&netlink.NUD_FAILED != 0 }

// PathResult is what the kernel would do to reach a destination (ip route get).
type PathResult struct {
	LinkIndex int
	Gateway   netip.Addr
	Src       netip.Addr
	Table     int
}

// Kernel reads network state. The netlink implementation reads the
// running kernel; tests substitute synthetic state.
type Kernel interface {
	Links() ([]Link, error)
	Addrs() ([]Addr, error)
	Routes(f Family) ([]Route, error) // every table
	Rules(f Family) ([]Rule, error)
	Neighs(f Family) ([]Neigh, error)
	RouteGet(dst netip.Addr) (PathResult, error)
}

// NetlinkKernel reads the kernel through a netlink handle.
type NetlinkKernel struct {
	h *netlink.Handle
}

// OpenKernel returns a Kernel over h, or over a new handle in the current
// network namespace when h is nil. Call the returned function when done:
// it closes the handle OpenKernel created, never one passed in.
func OpenKernel(h *netlink.Handle) (*NetlinkKernel, func(), error) {
	if h != nil {
		return &NetlinkKernel{h: h}, func() {}, nil
	}
	nh, err := netlink.NewHandle()
	if err != nil {
		return nil, nil, fmt.Errorf("open netlink: %w", err)
	}
	return &NetlinkKernel{h: nh}, nh.Close, nil
}

// dumpRetries bounds retries of a dump the kernel reported as interrupted
// (NLM_F_DUMP_INTR: the table changed while it was being read).
const dumpRetries = 10

func retryDump[T any](what string, f func() ([]T, error)) ([]T, error) {
	var v []T
	var err error
	for range dumpRetries {
		if v, err = f(); !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return v, nil
}

// Links lists every link.
func (k *NetlinkKernel) Links() ([]Link, error) {
	ls, err := retryDump("list links", k.h.LinkList)
	if err != nil {
		return nil, err
	}
	out := make([]Link, 0, len(ls))
	for _, l := range ls {
		a := l.Attrs()
		link := Link{
			Index: a.Index, Name: a.Name, Kind: l.Type(), Encap: a.EncapType,
			MAC: a.HardwareAddr, PermMAC: a.PermHWAddr,
			MasterIndex: a.MasterIndex, ParentIndex: a.ParentIndex,
			AdminUp: a.Flags&net.FlagUp != 0, LowerUp: a.RawFlags&unix.IFF_LOWER_UP != 0,
			MTU: a.MTU,
		}
		if v, ok := l.(*netlink.Vlan); ok {
			link.VLANID = v.VlanId
		}
		out = append(out, link)
	}
	return out, nil
}

// Addrs lists the addresses of every link, both families.
func (k *NetlinkKernel) Addrs() ([]Addr, error) {
	as, err := retryDump("list addresses", func() ([]netlink.Addr, error) { return k.h.AddrList(nil, netlink.FAMILY_ALL) })
	if err != nil {
		return nil, err
	}
	out := make([]Addr, 0, len(as))
	for _, a := range as {
		p, ok := prefixOf(a.IPNet)
		if !ok {
			continue
		}
		out = append(out, Addr{LinkIndex: a.LinkIndex, Prefix: p, Scope: a.Scope,
			Secondary: a.Flags&unix.IFA_F_SECONDARY != 0,
			Tentative: a.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) != 0,
			Dynamic:   a.Flags&unix.IFA_F_PERMANENT == 0 && a.ValidLft > 0 && uint32(a.ValidLft) != 0xffffffff})
	}
	return out, nil
}

// Routes lists the routes of every table for family f.
func (k *NetlinkKernel) Routes(f Family) ([]Route, error) {
	// RT_FILTER_TABLE with table 0 asks for all tables; without it the
	// library keeps only the main table.
	rs, err := retryDump("list "+f.String()+" routes", func() ([]netlink.Route, error) {
		return k.h.RouteListFiltered(int(f), &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	})
	if err != nil {
		return nil, err
	}
	out := make([]Route, 0, len(rs))
	for _, r := range rs {
		out = append(out, convertRoute(f, r))
	}
	return out, nil
}

func convertRoute(f Family, r netlink.Route) Route {
	out := Route{Family: f, Table: r.Table, Metric: r.Priority, Type: r.Type, Protocol: int(r.Protocol), Scope: int(r.Scope)}
	if p, ok := prefixOf(r.Dst); ok {
		out.Dst = p
	} else {
		// Before netlink v1.3.0 a default route had a nil Dst.
		out.Dst = netip.PrefixFrom(ZeroAddr(f), 0)
	}
	out.Src, _ = addrOf(r.Src)
	if len(r.MultiPath) == 0 {
		gw, _ := addrOf(r.Gw)
		out.Hops = []Hop{{LinkIndex: r.LinkIndex, Gateway: gw,
			OnLink: r.Flags&unix.RTNH_F_ONLINK != 0, LinkDown: r.Flags&unix.RTNH_F_LINKDOWN != 0}}
		return out
	}
	for _, nh := range r.MultiPath {
		gw, _ := addrOf(nh.Gw)
		out.Hops = append(out.Hops, Hop{LinkIndex: nh.LinkIndex, Gateway: gw,
			OnLink: nh.Flags&unix.RTNH_F_ONLINK != 0, LinkDown: nh.Flags&unix.RTNH_F_LINKDOWN != 0})
	}
	return out
}

// Rules lists the policy-routing rules of family f.
func (k *NetlinkKernel) Rules(f Family) ([]Rule, error) {
	rs, err := retryDump("list "+f.String()+" rules", func() ([]netlink.Rule, error) { return k.h.RuleList(int(f)) })
	if err != nil {
		return nil, err
	}
	out := make([]Rule, 0, len(rs))
	for _, r := range rs {
		src, _ := prefixOf(r.Src)
		dst, _ := prefixOf(r.Dst)
		out = append(out, Rule{
			Family: f, Priority: r.Priority, Table: r.Table, Src: src, Dst: dst,
			Selective: r.Mark != 0 || r.Mask != nil || r.IifName != "" || r.OifName != "" || r.Tos != 0 ||
				r.Dport != nil || r.Sport != nil || r.UIDRange != nil || r.IPProto != 0 || r.TunID != 0 || r.Invert,
			SuppressPrefixlen: r.SuppressPrefixlen,
			Goto:              r.Goto >= 0,
		})
	}
	return out, nil
}

// Neighs lists the neighbour cache of family f.
func (k *NetlinkKernel) Neighs(f Family) ([]Neigh, error) {
	ns, err := retryDump("list "+f.String()+" neighbours", func() ([]netlink.Neigh, error) { return k.h.NeighList(0, int(f)) })
	if err != nil {
		return nil, err
	}
	out := make([]Neigh, 0, len(ns))
	for _, n := range ns {
		ip, ok := addrOf(n.IP)
		if !ok {
			continue
		}
		out = append(out, Neigh{LinkIndex: n.LinkIndex, IP: ip, State: n.State})
	}
	return out, nil
}

// RouteGet asks the kernel which route it would use to reach dst. An IPv6
// zone names the outgoing interface.
func (k *NetlinkKernel) RouteGet(dst netip.Addr) (PathResult, error) {
	ip := net.IP(dst.WithZone("").AsSlice())
	var rs []netlink.Route
	var err error
	if z := dst.Zone(); z != "" {
		rs, err = k.h.RouteGetWithOptions(ip, &netlink.RouteGetOptions{Oif: z})
	} else {
		rs, err = k.h.RouteGet(ip)
	}
	if err != nil {
		return PathResult{}, err
	}
	if len(rs) == 0 {
		return PathResult{}, errors.New("the kernel returned no route")
	}
	gw, _ := addrOf(rs[0].Gw)
	src, _ := addrOf(rs[0].Src)
	return PathResult{LinkIndex: rs[0].LinkIndex, Gateway: gw, Src: src, Table: rs[0].Table}, nil
}

func addrOf(ip net.IP) (netip.Addr, bool) {
	a, ok := netip.AddrFromSlice(ip)
	return a.Unmap(), ok
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	a, ok := addrOf(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, bits := n.Mask.Size()
	if bits == 0 {
		return netip.Prefix{}, false
	}
	if a.Is4() && bits == 128 {
		ones -= 96
	}
	return netip.PrefixFrom(a, ones), true
}

// ZeroAddr is the unspecified address of family f (0.0.0.0 or ::).
func ZeroAddr(f Family) netip.Addr {
	if f == IPv6 {
		return netip.IPv6Unspecified()
	}
	return netip.IPv4Unspecified()
}

// Snapshot is the kernel's network state read at one moment.
type Snapshot struct {
	Links  []Link
	Addrs  []Addr
	Routes []Route // both families, every table
	Rules  []Rule
	Neighs []Neigh
}

// TakeSnapshot reads everything the routes check judges. A kernel with
// IPv6 disabled yields IPv4 state only.
func TakeSnapshot(k Kernel) (Snapshot, error) {
	var s Snapshot
	var err error
	if s.Links, err = k.Links(); err != nil {
		return s, err
	}
	if s.Addrs, err = k.Addrs(); err != nil {
		return s, err
	}
	for _, f := range []Family{IPv4, IPv6} {
		rs, err := k.Routes(f)
		if err == nil {
			s.Routes = append(s.Routes, rs...)
			var rules []Rule
			if rules, err = k.Rules(f); err == nil {
				s.Rules = append(s.Rules, rules...)
				var ns []Neigh
				if ns, err = k.Neighs(f); err == nil {
					s.Neighs = append(s.Neighs, ns...)
				}
			}
		}
		if err != nil && !(f == IPv6 && errors.Is(err, unix.EAFNOSUPPORT)) {
			return s, err
		}
	}
	return s, nil
}
