package routes

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/netstatetest"
)

func TestCheckRoutesSynthetic(t *testing.T) {
	root := writeRoot(t, map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 127.0.0.53\n"})
	type tc struct {
		name  string
		snap  func() netstate.Snapshot
		cfg   Settings
		paths map[string]netstate.PathResult
		want  []string // "status code" in order, exactly
		check func(t *testing.T, fs []runner.Finding)
	}
	okPath := map[string]netstate.PathResult{"192.0.2.53": {LinkIndex: 2, Src: netip.MustParseAddr("192.0.2.10"), Table: netstate.TableMain},
		"127.0.0.53": {LinkIndex: 1, Table: netstate.TableLocal}}
	tests := []tc{
		{name: "healthy single NIC", snap: singleNIC, paths: okPath,
			want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				d := find(fs, codeRoutesDefaultOK.ID).Detail
				if d["expected_interface"] != "eth0" || !strings.Contains(d["expected_from"], "first NIC") ||
					d["defaults"] != "default via 192.0.2.1 dev eth0 table main metric 100 proto dhcp" {
					t.Errorf("detail = %v", d)
				}
				if m := fs[2].Message; m != "nameserver 192.0.2.53: dev eth0 src 192.0.2.10" {
					t.Errorf("path message %q", m)
				}
			}},
		{name: "dual-NIC takeover", snap: func() netstate.Snapshot { return dualNIC(200, 100) }, paths: okPath,
			want: []string{"pass routes-links-ok", "fail routes-default-takeover", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				f := find(fs, codeRoutesDefaultTakeover.ID)
				if f.Message != "IPv4 default route leaves through eth1 (metric 100), not the expected eth0" ||
					!strings.Contains(f.Detail["defaults"], "dev eth1 table main metric 100") || !strings.Contains(f.Detail["defaults"], "dev eth0 table main metric 200") ||
					!strings.Contains(f.Remediation, "use-routes: false") {
					t.Errorf("finding = %+v", f)
				}
			}},
		{name: "expected by MAC makes the second NIC right", snap: func() netstate.Snapshot { return dualNIC(200, 100) },
			cfg: Settings{DefaultInterface: "52:54:00:00:00:03"}, paths: okPath,
			want: []string{"pass routes-links-ok", "warn routes-default-multiple", "warn routes-nameserver-secondary", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				if d := find(fs, codeRoutesDefaultMultiple.ID).Detail; d["expected_from"] != "config routes.default_interface=52:54:00:00:00:03 (eth1)" {
					t.Errorf("expected_from = %q", d["expected_from"])
				}
			}},
		{name: "expected by name, missing", snap: singleNIC, cfg: Settings{DefaultInterface: "mgmt0"}, paths: okPath,
			want: []string{"pass routes-links-ok", "fail routes-expected-missing", "pass routes-default-ok", "pass routes-path", "pass routes-path"}},
		{name: "equal metrics", snap: func() netstate.Snapshot { return dualNIC(100, 100) }, paths: okPath,
			want: []string{"pass routes-links-ok", "fail routes-default-tie", "pass routes-path", "pass routes-path"}},
		{name: "no default", paths: okPath, snap: func() netstate.Snapshot { s := singleNIC(); s.Routes = s.Routes[:1]; return s },
			want: []string{"pass routes-links-ok", "fail routes-no-default", "pass routes-path", "pass routes-path"}},
		{name: "policy table default beside main", paths: okPath, snap: func() netstate.Snapshot {
			s := dualNIC(100, 0)
			s.Routes[len(s.Routes)-1].Table = 100
			s.Rules = append(s.Rules, tRule(1000, 100, "198.51.100.10/32"))
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				d := find(fs, codeRoutesDefaultOK.ID).Detail
				if !strings.Contains(d["policy_defaults"], "via 198.51.100.1 dev eth1 table 100") || d["policy_rules"] != "1000: from 198.51.100.10/32 lookup 100" {
					t.Errorf("detail = %v", d)
				}
			}},
		{name: "policy table default only", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Routes[1].Table = 100
			s.Rules = append(s.Rules, tRule(1000, 100, "192.0.2.10/32"))
			return s
		}, want: []string{"pass routes-links-ok", "fail routes-no-default", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				if m := find(fs, codeRoutesNoDefault.ID).Message; m != "no IPv4 default route for general traffic; only policy tables 100 have one" {
					t.Errorf("message %q", m)
				}
			}},
		{name: "from-all rule before main sends everything to table 100", paths: okPath, snap: func() netstate.Snapshot {
			s := dualNIC(100, 0)
			s.Routes[len(s.Routes)-1].Table = 100
			s.Rules = append(s.Rules, tRule(100, 100, ""))
			return s
		}, want: []string{"pass routes-links-ok", "fail routes-default-takeover", "pass routes-path", "pass routes-path"}},
		{name: "suppressed table is skipped (wireguard)", paths: okPath, snap: func() netstate.Snapshot {
			s := dualNIC(100, 0)
			s.Routes[len(s.Routes)-1].Table = 100
			r := tRule(100, 100, "")
			r.SuppressPrefixlen = 0
			s.Rules = append(s.Rules, r)
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"}},
		{name: "gateway off-link and neighbour failed", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Routes[1].Hops[0].Gateway = netip.MustParseAddr("203.0.113.1")
			s.Neighs = []netstate.Neigh{{LinkIndex: 2, IP: netip.MustParseAddr("203.0.113.1"), State: unix.NUD_FAILED}}
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "warn routes-gateway-offlink", "warn routes-gateway-neigh-failed", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				f := find(fs, codeRoutesGatewayOffLink.ID)
				if f.Detail["interface_addresses"] != "192.0.2.10/24" || f.Detail["gateway"] != "203.0.113.1" || f.Detail["neighbour_state"] != "" {
					t.Errorf("off-link detail = %v", f.Detail)
				}
				if find(fs, codeRoutesGatewayNeighFail.ID).Detail["neighbour_state"] != "FAILED" {
					t.Error("no neighbour state")
				}
			}},
		{name: "onlink flag and link-scope routes make a gateway on-link", paths: okPath, snap: func() netstate.Snapshot {
			s := dualNIC(100, 200)
			s.Routes[1].Hops[0].Gateway = netip.MustParseAddr("203.0.113.1")
			s.Routes[1].Hops[0].OnLink = true
			s.Routes[3].Hops[0].Gateway = netip.MustParseAddr("203.0.113.9")
			s.Routes = append(s.Routes, tConnected(3, "203.0.113.9/32"))
			return s
		}, want: []string{"pass routes-links-ok", "warn routes-default-multiple", "pass routes-path", "pass routes-path"}},
		{name: "asymmetric: two NICs in one subnet", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Links = append(s.Links, tNIC(3, "eth1"))
			s.Addrs = append(s.Addrs, tAddr(3, "192.0.2.11/24"))
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "warn routes-asymmetric", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				if m := find(fs, codeRoutesAsymmetric.ID).Message; m != "eth0, eth1 are all in 192.0.2.0/24 without source-based routing rules" {
					t.Errorf("message %q", m)
				}
			}},
		{name: "same subnet with a source rule is fine", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Links = append(s.Links, tNIC(3, "eth1"))
			s.Addrs = append(s.Addrs, tAddr(3, "192.0.2.11/24"))
			s.Rules = append(s.Rules, tRule(1000, 101, "192.0.2.11/32"))
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"}},
		{name: "NIC down and NIC without address", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			down := tNIC(3, "eth1")
			down.LowerUp = false
			s.Links = append(s.Links, down, tNIC(4, "eth2"))
			return s
		}, want: []string{"warn routes-nic-down", "warn routes-nic-no-address", "pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"}},
		{name: "no NIC at all", paths: okPath, snap: func() netstate.Snapshot {
			return netstate.Snapshot{Links: []netstate.Link{lo(), {Index: 5, Name: "docker0", Kind: "bridge", Encap: "ether"}}, Rules: kernelRules()}
		}, want: []string{"fail routes-no-nic", "fail routes-no-default", "pass routes-path", "pass routes-path"}},
		{name: "no NIC has an address", paths: okPath, snap: func() netstate.Snapshot {
			return netstate.Snapshot{Links: []netstate.Link{lo(), tNIC(2, "eth0")}, Rules: kernelRules()}
		}, want: []string{"warn routes-nic-no-address", "fail routes-no-address", "fail routes-no-default", "pass routes-path", "pass routes-path"}},
		{name: "NIC in a bridge holds the address there", snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Links[1].MasterIndex = 7
			s.Links = append(s.Links, netstate.Link{Index: 7, Name: "br0", Kind: "bridge", Encap: "ether", AdminUp: true, LowerUp: true})
			s.Addrs[1].LinkIndex = 7
			s.Routes = []netstate.Route{tConnected(7, "192.0.2.10/24"), tDefault(7, "192.0.2.1", 100, netstate.TableMain)}
			return s
		}, paths: map[string]netstate.PathResult{"192.0.2.53": {LinkIndex: 7}, "127.0.0.53": {LinkIndex: 1}},
			want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				d := find(fs, codeRoutesDefaultOK.ID).Detail
				if d["expected_interface"] != "br0" || !strings.Contains(d["expected_from"], "held by br0") {
					t.Errorf("detail = %v", d)
				}
			}},
		{name: "VLAN on a NIC carries its address", snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Links = append(s.Links, netstate.Link{Index: 8, Name: "eth0.100", Kind: "vlan", Encap: "ether", ParentIndex: 2, AdminUp: true, LowerUp: true})
			s.Addrs[1].LinkIndex = 8
			s.Routes = []netstate.Route{tConnected(8, "192.0.2.10/24"), tDefault(8, "192.0.2.1", 100, netstate.TableMain)}
			return s
		}, paths: map[string]netstate.PathResult{"192.0.2.53": {LinkIndex: 8}, "127.0.0.53": {LinkIndex: 1}},
			want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				if d := find(fs, codeRoutesDefaultOK.ID).Detail; d["expected_interface"] != "eth0.100" {
					t.Errorf("detail = %v", d)
				}
			}},
		{name: "a veth's parent index names its peer, not a lower device", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Links[1].Kind, s.Links[1].ParentIndex = "veth", 3
			s.Links = append(s.Links, netstate.Link{Index: 3, Name: "eth1", Kind: "veth", Encap: "ether", ParentIndex: 2, AdminUp: true, LowerUp: true})
			return s
		}, want: []string{"warn routes-nic-no-address", "pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"}},
		{name: "nameserver through the second NIC, and unreachable targets", snap: func() netstate.Snapshot { return dualNIC(100, 200) },
			cfg:   Settings{Targets: []string{"203.0.113.80", "example.org"}},
			paths: map[string]netstate.PathResult{"192.0.2.53": {LinkIndex: 3, Gateway: netip.MustParseAddr("198.51.100.1")}, "127.0.0.53": {LinkIndex: 1}},
			want: []string{"pass routes-links-ok", "warn routes-default-multiple", "error routes-target-invalid",
				"warn routes-nameserver-secondary", "pass routes-path", "warn routes-path-unreachable"},
			check: func(t *testing.T, fs []runner.Finding) {
				f := find(fs, codeRoutesNameserverOffPath.ID)
				if f.Message != "nameserver 192.0.2.53 is reached through eth1, not through the default-route interface eth0" || f.Detail["gateway"] != "198.51.100.1" {
					t.Errorf("finding = %+v", f)
				}
				if f := find(fs, codeRoutesPathUnreachable.ID); f.Detail["error"] != "network is unreachable" || f.Detail["from"] != "config routes.targets" {
					t.Errorf("unreachable = %+v", f)
				}
			}},
		{name: "IPv6 takeover through a multipath tie", paths: okPath, snap: func() netstate.Snapshot {
			s := dualNIC(100, 200)
			s.Addrs = append(s.Addrs, tAddr(2, "2001:db8:1::10/64"), tAddr(3, "2001:db8:2::10/64"))
			r := tDefault(2, "fe80::1", 1024, netstate.TableMain)
			r.Hops = append(r.Hops, netstate.Hop{LinkIndex: 3, Gateway: netip.MustParseAddr("fe80::2")})
			s.Routes = append(s.Routes, r)
			return s
		}, want: []string{"pass routes-links-ok", "warn routes-default-multiple", "fail routes-default-tie", "pass routes-path", "pass routes-path"}},
		{name: "IPv6 only on the second NIC is expected there", paths: okPath, snap: func() netstate.Snapshot {
			s := dualNIC(100, 200)
			s.Addrs = append(s.Addrs, tAddr(3, "2001:db8:2::10/64"))
			s.Routes = append(s.Routes, tDefault(3, "fe80::1", 1024, netstate.TableMain))
			return s
		}, want: []string{"pass routes-links-ok", "warn routes-default-multiple", "pass routes-default-ok", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				if d := fs[2].Detail; d["expected_interface"] != "eth1" || d["expected_from"] != "first NIC with a global IPv6 address (lowest interface index): eth1" {
					t.Errorf("detail = %v", d)
				}
			}},
		{name: "ULA-only IPv6 is not judged", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Addrs = append(s.Addrs, tAddr(2, "fd00::10/64"))
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"}},
		{name: "IPv6-only guest skips IPv4", paths: okPath, snap: func() netstate.Snapshot {
			s := singleNIC()
			s.Addrs = []netstate.Addr{tAddr(2, "2001:db8::10/64")}
			s.Routes = []netstate.Route{tDefault(2, "fe80::1", 1024, netstate.TableMain)}
			return s
		}, want: []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path", "pass routes-path"},
			check: func(t *testing.T, fs []runner.Finding) {
				if m := fs[1].Message; m != "IPv6 default route leaves through eth0 via fe80::1" {
					t.Errorf("message %q", m)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &netstatetest.Kernel{Snap: tc.snap(), Paths: map[netip.Addr]netstate.PathResult{}}
			for a, p := range tc.paths {
				k.Paths[netip.MustParseAddr(a)] = p
			}
			fs := CheckRoutes(context.Background(), k, nil, root, tc.cfg)
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("findings:\n  %s\nwant:\n  %s\n%+v", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "), fs)
			}
			if tc.check != nil {
				tc.check(t, fs)
			}
		})
	}
}

func TestCheckRoutesKernelError(t *testing.T) {
	fs := CheckRoutes(context.Background(), &netstatetest.Kernel{Err: errors.New("netlink: operation not permitted")}, nil, writeRoot(t, nil), Settings{})
	assertConventions(t, fs, Codes)
	if len(fs) != 1 || fs[0].Status != runner.Error || fs[0].Code != codeRoutesKernelError.ID || fs[0].Detail["error"] != "list links: netlink: operation not permitted" && fs[0].Detail["error"] != "netlink: operation not permitted" {
		t.Errorf("got %+v", fs)
	}
}

func TestIsNIC(t *testing.T) {
	for _, tc := range []struct {
		l    netstate.Link
		want bool
	}{
		{netstate.Link{Name: "lo", Kind: "device", Encap: "loopback"}, false},
		{netstate.Link{Name: "eth0", Kind: "device", Encap: "ether"}, true},
		{netstate.Link{Name: "enp1s0", Kind: "device", Encap: "ether", Device: true}, true},
		{netstate.Link{Name: "ib0", Kind: "ipoib", Encap: "infiniband", Device: true}, true},
		{netstate.Link{Name: "docker0", Kind: "bridge", Encap: "ether"}, false},
		{netstate.Link{Name: "br0", Kind: "bridge", Encap: "ether"}, false},
		{netstate.Link{Name: "bond0", Kind: "bond", Encap: "ether"}, false},
		{netstate.Link{Name: "veth1a2b3c", Kind: "veth", Encap: "ether"}, false},
		{netstate.Link{Name: "eth0", Kind: "veth", Encap: "ether"}, true},
		{netstate.Link{Name: "mgmt0", Kind: "veth", Encap: "ether", MasterIndex: 4}, false},
		{netstate.Link{Name: "cali12345", Kind: "veth", Encap: "ether"}, false},
		{netstate.Link{Name: "tun0", Kind: "tuntap", Encap: "none"}, false},
		{netstate.Link{Name: "tap0", Kind: "device", Encap: "ether"}, false},
		{netstate.Link{Name: "wg0", Kind: "wireguard", Encap: "none"}, false},
		{netstate.Link{Name: "virbr0-nic", Kind: "device", Encap: "ether"}, false},
		{netstate.Link{Name: "eth0.100", Kind: "vlan", Encap: "ether"}, false},
		{netstate.Link{Name: "sit0", Kind: "sit", Encap: "sit"}, false},
	} {
		if got := netstate.IsNIC(tc.l); got != tc.want {
			t.Errorf("IsNIC(%s %s %s device=%v) = %v", tc.l.Name, tc.l.Kind, tc.l.Encap, tc.l.Device, got)
		}
	}
}

func TestMarkDevices(t *testing.T) {
	root := writeRoot(t, map[string]string{"/sys/class/net/ens3/device/vendor": "0x1af4\n", "/sys/class/net/eth9/address": "x"})
	ls := []netstate.Link{{Name: "ens3"}, {Name: "eth9"}, {Name: "../../etc"}}
	netstate.MarkDevices(root, ls)
	if !ls[0].Device || ls[1].Device || ls[2].Device {
		t.Errorf("devices = %+v", ls)
	}
}

func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"eth0": "eth0", "eth0.100": "eth0_100", "-br--X-": "br_x", "Ä": "x", "enp1s0": "enp1s0"} {
		if got := snake(in); got != want || !checktest.IsSnake("nic_"+got) {
			t.Errorf("snake(%q) = %q, want %q", in, got, want)
		}
	}
}

// Shared with the other network checks' tests.
var (
	tNIC        = netstatetest.NIC
	tAddr       = netstatetest.Addr
	tDefault    = netstatetest.Default
	tConnected  = netstatetest.Connected
	tRule       = netstatetest.Rule
	kernelRules = netstatetest.KernelRules
	lo          = netstatetest.Lo
	singleNIC   = netstatetest.SingleNIC
	dualNIC     = netstatetest.DualNIC
)
