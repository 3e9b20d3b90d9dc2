package netstate

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
)

// TestNetlinkKernel reads a namespace built through netlink back through
// NetlinkKernel and checks every conversion the judges rely on. Root only.
func TestNetlinkKernel(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", "52:54:00:00:00:10", "192.0.2.10/24", "2001:db8:1::10/64")
	ns.NIC(t, "eth1", "52:54:00:00:00:11", "198.51.100.10/24")
	ns.Default(t, "eth0", "192.0.2.1", 100, 0, false)
	ns.Default(t, "eth1", "198.51.100.1", 0, 100, false)
	ns.Default(t, "eth0", "2001:db8:1::1", 1024, 0, false)
	ns.Rule(t, "198.51.100.10/32", 100, 1000)
	ns.Neigh(t, "eth0", "192.0.2.1", netlink.NUD_FAILED)

	k, done, err := OpenKernel(ns.Handle)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	s, err := TakeSnapshot(k)
	if err != nil {
		t.Fatal(err)
	}
	top := NewTopology(s)
	if len(top.NICs) != 2 || top.NICs[0].Name != "eth0" || top.NICs[1].Name != "eth1" {
		t.Fatalf("NICs = %+v", top.NICs)
	}
	eth0 := top.NICs[0]
	if eth0.Kind != "veth" || eth0.Encap != "ether" || eth0.MAC.String() != "52:54:00:00:00:10" || !eth0.Up() {
		t.Errorf("eth0 = %+v", eth0)
	}
	var got []string
	for _, a := range top.NICAddrs(eth0) {
		got = append(got, a.Prefix.String())
	}
	if !slices.Equal(got, []string{"192.0.2.10/24", "2001:db8:1::10/64"}) {
		t.Errorf("eth0 global addresses = %v", got)
	}

	var defaults []string
	for _, f := range []Family{IPv4, IPv6} {
		for _, r := range top.Defaults(f) {
			defaults = append(defaults, top.DescribeRoute(r))
		}
	}
	want := []string{
		"default via 192.0.2.1 dev eth0 table main metric 100 proto dhcp",
		"default via 198.51.100.1 dev eth1 table 100 metric 0 proto dhcp",
		"default via 2001:db8:1::1 dev eth0 table main metric 1024 proto dhcp",
	}
	slices.Sort(defaults)
	if !slices.Equal(defaults, want) {
		t.Errorf("defaults =\n%v\nwant\n%v", defaults, want)
	}
	if tb, ok := top.GeneralTable(IPv4, top.Defaults(IPv4)); !ok || tb != TableMain {
		t.Errorf("general table = %d %v", tb, ok)
	}
	if rs := top.RulesTo(IPv4, 100); !slices.Equal(rs, []string{"1000: from 198.51.100.10/32 lookup 100"}) {
		t.Errorf("rules to 100 = %v", rs)
	}
	if !top.HasSourceRule(netip.MustParseAddr("198.51.100.10")) || top.HasSourceRule(netip.MustParseAddr("192.0.2.10")) {
		t.Error("hasSourceRule")
	}
	failed := false
	for _, n := range s.Neighs {
		failed = failed || n.IP == netip.MustParseAddr("192.0.2.1") && n.Failed() && n.LinkIndex == eth0.Index
	}
	if !failed {
		t.Errorf("no FAILED neighbour in %+v", s.Neighs)
	}
	if !top.OnLink(eth0.Index, netip.MustParseAddr("192.0.2.1")) || top.OnLink(eth0.Index, netip.MustParseAddr("203.0.113.1")) {
		t.Error("onLink")
	}

	for _, tc := range []struct {
		dst, dev, gw, src string
		table             int
	}{
		{"192.0.2.53", "eth0", "", "192.0.2.10", TableMain},
		{"203.0.113.7", "eth0", "192.0.2.1", "192.0.2.10", TableMain},
		{"198.51.100.53", "eth1", "", "198.51.100.10", TableMain},
		{"fe80::53%eth1", "eth1", "", "", TableMain},
	} {
		p, err := k.RouteGet(netip.MustParseAddr(tc.dst))
		if err != nil {
			t.Errorf("RouteGet(%s): %v", tc.dst, err)
			continue
		}
		if top.Name(p.LinkIndex) != tc.dev || p.Gateway.String() != orInvalid(tc.gw) || tc.src != "" && p.Src.String() != tc.src || p.Table != tc.table {
			t.Errorf("RouteGet(%s) = dev %s %+v", tc.dst, top.Name(p.LinkIndex), p)
		}
	}
	if _, err := k.RouteGet(netip.MustParseAddr("2001:db8:ffff::1")); err != nil {
		t.Errorf("IPv6 route through the default: %v", err)
	}
	// Without any default the kernel refuses, and the error says why.
	if err := ns.Handle.RouteDel(&netlink.Route{LinkIndex: eth0.Index, Dst: nil, Gw: netip.MustParseAddr("192.0.2.1").AsSlice(), Priority: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.RouteGet(netip.MustParseAddr("203.0.113.7")); err == nil || err.Error() != unix.ENETUNREACH.Error() {
		t.Errorf("RouteGet without a default: %v", err)
	}
}

func orInvalid(s string) string {
	if s == "" {
		return "invalid IP"
	}
	return s
}

// TestOpenKernelCurrentNamespace opens and closes a handle of its own;
// it reads nothing from the host.
func TestOpenKernelCurrentNamespace(t *testing.T) {
	k, done, err := OpenKernel(nil)
	if err != nil {
		testenv.Missing(t, "netlink", fmt.Sprintf("netlink unavailable here: %v", err))
	}
	if k == nil {
		t.Fatal("nil kernel")
	}
	done()
}
