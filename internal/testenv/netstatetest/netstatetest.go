// Package netstatetest builds network state for the network checks'
// tests without a kernel: a fake Kernel serving a synthetic Snapshot,
// the links, addresses, routes and rules such snapshots are made of, and
// the checks on findings those tests share.
//
// It is imported by tests only; nothing here runs in guestcheck itself.
package netstatetest

import (
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"golang.org/x/sys/unix"
)

// AssertConventions holds findings to the project's rules.
func AssertConventions(t *testing.T, fs []runner.Finding, codes []runner.Code) {
	t.Helper()
	checktest.Conventions(t, fs, codes)
}

// Codes lists the findings as "status code", for a failure message.
func Codes(fs []runner.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Status)+" "+f.Code)
	}
	return out
}

// Find returns the finding with code, or nil.
func Find(fs []runner.Finding, code string) *runner.Finding {
	for i := range fs {
		if fs[i].Code == code {
			return &fs[i]
		}
	}
	return nil
}

// MustFind is Find for a finding the test cannot go on without.
func MustFind(t *testing.T, fs []runner.Finding, code string) runner.Finding {
	t.Helper()
	f := Find(fs, code)
	if f == nil {
		t.Fatalf("no %s finding in %v", code, Codes(fs))
	}
	return *f
}

// Synthetic kernel state, as netroute's tests build it.

// Kernel is a netstate.Kernel serving a synthetic snapshot; RouteGet
// answers from Paths.
type Kernel struct {
	Snap  netstate.Snapshot
	Paths map[netip.Addr]netstate.PathResult
	Err   error // returned by Links
}

// Links returns the snapshot's links, or Err.
func (k *Kernel) Links() ([]netstate.Link, error) { return k.Snap.Links, k.Err }

// Addrs returns the snapshot's addresses.
func (k *Kernel) Addrs() ([]netstate.Addr, error) { return k.Snap.Addrs, nil }

// Routes returns the snapshot's routes of family f.
func (k *Kernel) Routes(f netstate.Family) ([]netstate.Route, error) {
	var out []netstate.Route
	for _, r := range k.Snap.Routes {
		if r.Family == f {
			out = append(out, r)
		}
	}
	return out, nil
}

// Rules returns the snapshot's rules of family f.
func (k *Kernel) Rules(f netstate.Family) ([]netstate.Rule, error) {
	var out []netstate.Rule
	for _, r := range k.Snap.Rules {
		if r.Family == f {
			out = append(out, r)
		}
	}
	return out, nil
}

// Neighs returns the snapshot's neighbours of family f.
func (k *Kernel) Neighs(f netstate.Family) ([]netstate.Neigh, error) {
	var out []netstate.Neigh
	for _, n := range k.Snap.Neighs {
		if netstate.FamilyOf(n.IP) == f {
			out = append(out, n)
		}
	}
	return out, nil
}

// RouteGet answers from Paths; any other destination is unreachable.
func (k *Kernel) RouteGet(dst netip.Addr) (netstate.PathResult, error) {
	if p, ok := k.Paths[dst]; ok {
		return p, nil
	}
	return netstate.PathResult{}, unix.ENETUNREACH
}

// NIC is a plain, up Ethernet NIC with MAC 52:54:00:00:00:<idx>.
func NIC(idx int, name string) netstate.Link {
	return netstate.Link{Index: idx, Name: name, Kind: "device", Encap: "ether", AdminUp: true, LowerUp: true,
		MAC: net.HardwareAddr{0x52, 0x54, 0, 0, 0, byte(idx)}}
}

// Addr is a global address on link idx.
func Addr(idx int, p string) netstate.Addr {
	return netstate.Addr{LinkIndex: idx, Prefix: netip.MustParsePrefix(p)}
}

// Default is a DHCP default route via gw on link idx.
func Default(idx int, gw string, metric, table int) netstate.Route {
	g := netip.MustParseAddr(gw)
	f := netstate.FamilyOf(g)
	return netstate.Route{Family: f, Table: table, Dst: netip.PrefixFrom(netstate.ZeroAddr(f), 0), Metric: metric, Type: netstate.RouteUnicast,
		Protocol: unix.RTPROT_DHCP, Hops: []netstate.Hop{{LinkIndex: idx, Gateway: g}}}
}

// Connected is the kernel's prefix route for an address.
func Connected(idx int, p string) netstate.Route {
	pp := netip.MustParsePrefix(p).Masked()
	return netstate.Route{Family: netstate.FamilyOf(pp.Addr()), Table: netstate.TableMain, Dst: pp, Type: netstate.RouteUnicast, Protocol: unix.RTPROT_KERNEL,
		Scope: unix.RT_SCOPE_LINK, Hops: []netstate.Hop{{LinkIndex: idx}}}
}

// Rule is a routing rule to table, from src ("" for all).
func Rule(prio, table int, src string) netstate.Rule {
	r := netstate.Rule{Family: netstate.IPv4, Priority: prio, Table: table, SuppressPrefixlen: -1}
	if src != "" {
		r.Src = netip.MustParsePrefix(src)
		r.Family = netstate.FamilyOf(r.Src.Addr())
	}
	return r
}

// KernelRules are the three rules every IPv4 kernel starts with.
func KernelRules() []netstate.Rule {
	return []netstate.Rule{Rule(0, netstate.TableLocal, ""), Rule(32766, netstate.TableMain, ""), Rule(32767, netstate.TableDefault, "")}
}

// Lo is the loopback link.
func Lo() netstate.Link {
	return netstate.Link{Index: 1, Name: "lo", Kind: "device", Encap: "loopback", AdminUp: true, LowerUp: true}
}

// SingleNIC is a healthy guest: eth0 192.0.2.10/24, default via 192.0.2.1.
func SingleNIC() netstate.Snapshot {
	return netstate.Snapshot{
		Links:  []netstate.Link{Lo(), NIC(2, "eth0")},
		Addrs:  []netstate.Addr{{LinkIndex: 1, Prefix: netip.MustParsePrefix("127.0.0.1/8"), Scope: unix.RT_SCOPE_HOST}, Addr(2, "192.0.2.10/24")},
		Routes: []netstate.Route{Connected(2, "192.0.2.10/24"), Default(2, "192.0.2.1", 100, netstate.TableMain)},
		Rules:  KernelRules(),
	}
}

// DualNIC is SingleNIC plus eth1 198.51.100.10/24 with its own default route.
func DualNIC(eth0Metric, eth1Metric int) netstate.Snapshot {
	s := SingleNIC()
	s.Routes[1].Metric = eth0Metric
	s.Links = append(s.Links, NIC(3, "eth1"))
	s.Addrs = append(s.Addrs, Addr(3, "198.51.100.10/24"))
	s.Routes = append(s.Routes, Connected(3, "198.51.100.10/24"), Default(3, "198.51.100.1", eth1Metric, netstate.TableMain))
	return s
}

// LiveEnv is a live environment whose kernel is the namespace ns (nil for
// checks that never reach the kernel) and whose files are root.
func LiveEnv(root *fs.Root, ns *nstest.NS, cfg *config.Config) *runner.Env {
	if cfg == nil {
		cfg = config.Default()
	}
	env := &runner.Env{Root: root, Live: true, Config: cfg, Now: time.Now, IsRoot: os.Geteuid() == 0}
	if ns != nil {
		env.Netlink = ns.Handle
	}
	return env
}
