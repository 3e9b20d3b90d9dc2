package netcheck

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/check/checktest"
	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/netstate"
	"github.com/guestcheck/guestcheck/internal/netstate/nstest"
	"golang.org/x/sys/unix"
)

// The helpers every test of the package shares: fake guest roots, a live
// Env, and the rules every finding is held to.

// writeRoot creates a guest root under t.TempDir from path -> content;
// a content starting with "->" makes a symlink to the rest.
func writeRoot(t testing.TB, files map[string]string) *fs.Root {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, hp); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(hp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openRoot(t, dir)
}

func openRoot(t testing.TB, dir string) *fs.Root {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// liveEnv is a live environment whose kernel is the namespace ns (nil for
// checks that never reach the kernel) and whose files are root.
func liveEnv(root *fs.Root, ns *nstest.NS, cfg *config.Config) *check.Env {
	if cfg == nil {
		cfg = config.Default()
	}
	env := &check.Env{Root: root, Live: true, Config: cfg, Now: time.Now, IsRoot: os.Geteuid() == 0}
	if ns != nil {
		env.Netlink = ns.Handle
	}
	return env
}

// assertConventions holds findings to the project's rules.
func assertConventions(t *testing.T, fs []check.Finding, codes []string) {
	t.Helper()
	checktest.Conventions(t, fs, codes)
}

func codesOf(fs []check.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Status)+" "+f.Code)
	}
	return out
}

func find(fs []check.Finding, code string) *check.Finding {
	for i := range fs {
		if fs[i].Code == code {
			return &fs[i]
		}
	}
	return nil
}

// mustFind is find for a finding the test cannot go on without.
func mustFind(t *testing.T, fs []check.Finding, code string) check.Finding {
	t.Helper()
	f := find(fs, code)
	if f == nil {
		t.Fatalf("no %s finding in %v", code, codesOf(fs))
	}
	return *f
}

// Synthetic kernel state, as netroute's tests build it.

func tNIC(idx int, name string) netstate.Link {
	return netstate.Link{Index: idx, Name: name, Kind: "device", Encap: "ether", AdminUp: true, LowerUp: true,
		MAC: net.HardwareAddr{0x52, 0x54, 0, 0, 0, byte(idx)}}
}

func tAddr(idx int, p string) netstate.Addr {
	return netstate.Addr{LinkIndex: idx, Prefix: netip.MustParsePrefix(p)}
}

func tDefault(idx int, gw string, metric, table int) netstate.Route {
	g := netip.MustParseAddr(gw)
	f := netstate.FamilyOf(g)
	return netstate.Route{Family: f, Table: table, Dst: netip.PrefixFrom(netstate.ZeroAddr(f), 0), Metric: metric, Type: netstate.RouteUnicast,
		Protocol: unix.RTPROT_DHCP, Hops: []netstate.Hop{{LinkIndex: idx, Gateway: g}}}
}

// tConnected is the kernel's prefix route for an address.
func tConnected(idx int, p string) netstate.Route {
	pp := netip.MustParsePrefix(p).Masked()
	return netstate.Route{Family: netstate.FamilyOf(pp.Addr()), Table: netstate.TableMain, Dst: pp, Type: netstate.RouteUnicast, Protocol: unix.RTPROT_KERNEL,
		Scope: unix.RT_SCOPE_LINK, Hops: []netstate.Hop{{LinkIndex: idx}}}
}

func tRule(prio, table int, src string) netstate.Rule {
	r := netstate.Rule{Family: netstate.IPv4, Priority: prio, Table: table, SuppressPrefixlen: -1}
	if src != "" {
		r.Src = netip.MustParsePrefix(src)
		r.Family = netstate.FamilyOf(r.Src.Addr())
	}
	return r
}

// kernelRules are the three rules every IPv4 kernel starts with.
func kernelRules() []netstate.Rule {
	return []netstate.Rule{tRule(0, netstate.TableLocal, ""), tRule(32766, netstate.TableMain, ""), tRule(32767, netstate.TableDefault, "")}
}

func lo() netstate.Link {
	return netstate.Link{Index: 1, Name: "lo", Kind: "device", Encap: "loopback", AdminUp: true, LowerUp: true}
}

// singleNIC is a healthy guest: eth0 192.0.2.10/24, default via 192.0.2.1.
func singleNIC() netstate.Snapshot {
	return netstate.Snapshot{
		Links:  []netstate.Link{lo(), tNIC(2, "eth0")},
		Addrs:  []netstate.Addr{{LinkIndex: 1, Prefix: netip.MustParsePrefix("127.0.0.1/8"), Scope: unix.RT_SCOPE_HOST}, tAddr(2, "192.0.2.10/24")},
		Routes: []netstate.Route{tConnected(2, "192.0.2.10/24"), tDefault(2, "192.0.2.1", 100, netstate.TableMain)},
		Rules:  kernelRules(),
	}
}
