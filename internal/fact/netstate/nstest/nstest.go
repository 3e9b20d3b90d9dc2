// Package nstest builds throwaway network namespaces for the root-only
// tests of the network checks: a "guest" namespace whose NICs are veth
// ends, and a "network" namespace holding the other ends (and, when a
// test wants one, the gateway's address). Only documentation address
// ranges are accepted, so a test can never route to a real network.
// Beside them: fake guest roots and the live Env the checks run in.
//
// It is imported by tests only; nothing here runs in guestcheck itself.
package nstest

import (
	"net"
	"net/netip"
	"runtime"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// docRanges are the only addresses tests may use (RFC 5737, RFC 3849).
var docRanges = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// IsDocumentation reports whether a lies in a documentation range.
func IsDocumentation(a netip.Addr) bool {
	for _, p := range docRanges {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

// NS is a guest namespace plus the namespace its NICs connect to.
type NS struct {
	// Handle reads and changes the guest namespace; hand it to
	// check.Env.Netlink.
	Handle *netlink.Handle
	peer   *netlink.Handle
	peerNS netns.NsHandle
}

// New creates the two namespaces and removes them when the test ends. It
// skips the test when not running as root.
func New(t testing.TB) *NS {
	t.Helper()
	testenv.RequireRoot(t, "needs root for network namespaces")
	// netns.New switches the calling thread; lock it so that nothing else
	// runs there, and switch straight back.
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("get current netns: %v", err)
	}
	defer orig.Close()
	guest, gerr := netns.New()
	if gerr == nil {
		gerr = netns.Set(orig)
	}
	var peer netns.NsHandle
	var perr error
	if gerr == nil {
		if peer, perr = netns.New(); perr == nil {
			perr = netns.Set(orig)
		}
	}
	if cur, err := netns.Get(); err == nil && cur.Equal(orig) {
		cur.Close()
		runtime.UnlockOSThread()
	} else {
		// The thread is stuck in another namespace: leave it locked, so
		// that it dies with this goroutine instead of being reused.
		t.Fatalf("could not return to the original network namespace: %v", err)
	}
	if gerr != nil || perr != nil {
		t.Fatalf("create network namespaces: %v %v", gerr, perr)
	}
	h, err := netlink.NewHandleAt(guest)
	if err != nil {
		t.Fatalf("netlink handle in guest namespace: %v", err)
	}
	ph, err := netlink.NewHandleAt(peer)
	if err != nil {
		h.Close()
		t.Fatalf("netlink handle in peer namespace: %v", err)
	}
	t.Cleanup(func() {
		h.Close()
		ph.Close()
		guest.Close()
		peer.Close()
	})
	return &NS{Handle: h, peer: ph, peerNS: peer}
}

// NIC adds a veth pair: name (with mac and the given addresses) in the
// guest, its peer "p-"+name in the network namespace, both up.
func (n *NS) NIC(t testing.TB, name, mac string, addrs ...string) netlink.Link {
	t.Helper()
	hw, err := net.ParseMAC(mac)
	if err != nil {
		t.Fatalf("NIC %s: %v", name, err)
	}
	peerName := "p-" + name
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, HardwareAddr: hw}, PeerName: peerName,
		PeerNamespace: netlink.NsFd(int(n.peerNS))}
	if err := n.Handle.LinkAdd(veth); err != nil {
		t.Fatalf("add veth %s: %v", name, err)
	}
	l, err := n.Handle.LinkByName(name)
	if err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	p, err := n.peer.LinkByName(peerName)
	if err != nil {
		t.Fatalf("find %s: %v", peerName, err)
	}
	if err := n.peer.LinkSetUp(p); err != nil {
		t.Fatalf("up %s: %v", peerName, err)
	}
	if err := n.Handle.LinkSetUp(l); err != nil {
		t.Fatalf("up %s: %v", name, err)
	}
	for _, a := range addrs {
		if err := n.Handle.AddrAdd(l, addr(t, a)); err != nil {
			t.Fatalf("address %s on %s: %v", a, name, err)
		}
	}
	// Re-read: flags and the carrier changed since LinkAdd.
	if l, err = n.Handle.LinkByName(name); err != nil {
		t.Fatalf("find %s: %v", name, err)
	}
	return l
}

// PeerAddr gives the network side of nic an address (typically the
// gateway's), so that the gateway exists on the link.
func (n *NS) PeerAddr(t testing.TB, nic, a string) {
	t.Helper()
	p, err := n.peer.LinkByName("p-" + nic)
	if err != nil {
		t.Fatalf("find p-%s: %v", nic, err)
	}
	if err := n.peer.AddrAdd(p, addr(t, a)); err != nil {
		t.Fatalf("address %s on p-%s: %v", a, nic, err)
	}
}

// Default adds a default route through gw on dev with the given metric in
// table (0 means main). With appendRoute the route is appended
// (NLM_F_APPEND, `ip route append`), which IPv4 needs for a second default
// route with the same metric.
func (n *NS) Default(t testing.TB, dev, gw string, metric, table int, appendRoute bool) {
	t.Helper()
	l, err := n.Handle.LinkByName(dev)
	if err != nil {
		t.Fatalf("find %s: %v", dev, err)
	}
	g := ip(t, gw)
	dst := &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)}
	if g.To4() == nil {
		dst = &net.IPNet{IP: net.IPv6zero, Mask: net.CIDRMask(0, 128)}
	}
	r := &netlink.Route{LinkIndex: l.Attrs().Index, Dst: dst, Gw: g, Priority: metric, Table: table, Protocol: unix.RTPROT_DHCP}
	if appendRoute {
		err = n.Handle.RouteAppend(r)
	} else {
		err = n.Handle.RouteAdd(r)
	}
	if err != nil {
		t.Fatalf("default via %s dev %s metric %d table %d: %v", gw, dev, metric, table, err)
	}
}

// Rule adds "from src lookup table" at priority prio.
func (n *NS) Rule(t testing.TB, src string, table, prio int) {
	t.Helper()
	r := netlink.NewRule()
	a := addr(t, src)
	r.Src = a.IPNet
	r.Table = table
	r.Priority = prio
	r.Family = unix.AF_INET
	if a.IP.To4() == nil {
		r.Family = unix.AF_INET6
	}
	if err := n.Handle.RuleAdd(r); err != nil {
		t.Fatalf("rule from %s lookup %d: %v", src, table, err)
	}
}

// Neigh sets the neighbour entry of a on dev to state (netlink.NUD_*).
func (n *NS) Neigh(t testing.TB, dev, a string, state int) {
	t.Helper()
	l, err := n.Handle.LinkByName(dev)
	if err != nil {
		t.Fatalf("find %s: %v", dev, err)
	}
	g := ip(t, a)
	fam := unix.AF_INET
	if g.To4() == nil {
		fam = unix.AF_INET6
	}
	if err := n.Handle.NeighSet(&netlink.Neigh{LinkIndex: l.Attrs().Index, IP: g, State: state, Family: fam}); err != nil {
		t.Fatalf("neighbour %s on %s: %v", a, dev, err)
	}
}

// ip parses a documentation address or fails the test.
func ip(t testing.TB, s string) net.IP {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil || !IsDocumentation(a) {
		t.Fatalf("%q: tests may only use documentation addresses (%v)", s, err)
	}
	return net.IP(a.AsSlice())
}

// addr parses a documentation prefix ("192.0.2.10/24") or fails the test.
func addr(t testing.TB, s string) *netlink.Addr {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil || !IsDocumentation(p.Addr()) {
		t.Fatalf("%q: tests may only use documentation prefixes (%v)", s, err)
	}
	a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
	if p.Addr().Is6() {
		a.Flags = unix.IFA_F_NODAD // no duplicate address detection delay
	}
	return a
}
