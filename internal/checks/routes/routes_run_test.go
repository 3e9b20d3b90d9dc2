package routes

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// The tests below run RunRoutes whole, against network namespaces they
// build (root only); routes_test.go judges synthetic snapshots.

const ncResolv = "nameserver 192.0.2.53\n"

// rtMgmt gives the namespace the management NIC of every scenario: eth0,
// 192.0.2.10/24, its gateway 192.0.2.1 present on the network side.
func rtMgmt(t *testing.T, ns *nstest.NS, metric int) {
	ns.NIC(t, "eth0", "52:54:00:00:00:10", "192.0.2.10/24")
	ns.PeerAddr(t, "eth0", "192.0.2.1/24")
	if metric >= 0 {
		ns.Default(t, "eth0", "192.0.2.1", metric, 0, false)
	}
}

// rtVLAN adds the second NIC of the dual-NIC scenarios: eth1 on a VLAN
// network, 198.51.100.10/24, gateway 198.51.100.1.
func rtVLAN(t *testing.T, ns *nstest.NS) {
	ns.NIC(t, "eth1", "52:54:00:00:00:11", "198.51.100.10/24")
	ns.PeerAddr(t, "eth1", "198.51.100.1/24")
}

func rtRun(t *testing.T, ns *nstest.NS, files map[string]string, cfg *config.Config) []runner.Finding {
	t.Helper()
	if files == nil {
		files = map[string]string{"/etc/resolv.conf": ncResolv}
	}
	fs := RunRoutes(context.Background(), liveEnv(writeRoot(t, files), ns, cfg))
	assertConventions(t, fs, Codes)
	return fs
}

func TestRoutesHealthySingleNIC(t *testing.T) {
	ns := nstest.New(t)
	rtMgmt(t, ns, 100)
	fs := rtRun(t, ns, nil, nil)
	want := []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if m := fs[1].Message; m != "IPv4 default route leaves through eth0 via 192.0.2.1" {
		t.Errorf("message %q", m)
	}
	if m := fs[2].Message; m != "nameserver 192.0.2.53: dev eth0 src 192.0.2.10" {
		t.Errorf("path %q", m)
	}
}

// TestRoutesDualNICTakeover reproduces the Harvester/KubeVirt problem: the
// management NIC eth0 gets its default route from DHCP with networkd's
// metric 1024, then the VLAN NIC's DHCP client installs one with metric 0,
// which wins, so replies to the management address leave through the VLAN.
func TestRoutesDualNICTakeover(t *testing.T) {
	ns := nstest.New(t)
	rtMgmt(t, ns, 1024)
	rtVLAN(t, ns)
	ns.Default(t, "eth1", "198.51.100.1", 0, 0, false)
	files := map[string]string{"/etc/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n"}

	fs := rtRun(t, ns, files, nil)
	want := []string{"pass routes-links-ok", "fail routes-default-takeover", "pass routes-path", "warn routes-nameserver-secondary"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	f := fs[1]
	if f.Message != "IPv4 default route leaves through eth1 (metric 0), not the expected eth0" ||
		f.Detail["expected_interface"] != "eth0" || f.Detail["expected_from"] != "first NIC with a global IPv4 address (lowest interface index): eth0" ||
		f.Detail["winner"] != "default via 198.51.100.1 dev eth1 table main metric 0 proto dhcp" ||
		!strings.Contains(f.Detail["defaults"], "default via 192.0.2.1 dev eth0 table main metric 1024 proto dhcp") {
		t.Errorf("takeover finding = %+v", f)
	}
	if d := fs[3].Detail; d["interface"] != "eth1" || d["default_interface"] != "eth0" {
		t.Errorf("nameserver finding = %+v", fs[3])
	}

	// The same state is right when the configuration says eth1 (by MAC)
	// is the interface that must carry the default route.
	cfg := config.Default()
	settings.Set(cfg, Settings{DefaultInterface: "52:54:00:00:00:11"})
	fs = rtRun(t, ns, files, cfg)
	want = []string{"pass routes-links-ok", "warn routes-default-multiple", "warn routes-nameserver-secondary", "pass routes-path"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("with default_interface: got %v, want %v\n%+v", got, want, fs)
	}
	if d := fs[1].Detail; d["expected_from"] != "config routes.default_interface=52:54:00:00:00:11 (eth1)" {
		t.Errorf("expected_from = %q", d["expected_from"])
	}
}

func TestRoutesEqualMetricDefaults(t *testing.T) {
	ns := nstest.New(t)
	rtMgmt(t, ns, 100)
	rtVLAN(t, ns)
	ns.Default(t, "eth1", "198.51.100.1", 100, 0, true)
	fs := rtRun(t, ns, nil, nil)
	f := mustFind(t, fs, "routes-default-tie")
	if f.Status != runner.Fail || f.Message != "IPv4 default routes share the lowest metric 100 on eth0 and eth1: which one wins is arbitrary" {
		t.Errorf("finding = %+v", f)
	}
}

func TestRoutesNoDefault(t *testing.T) {
	ns := nstest.New(t)
	rtMgmt(t, ns, -1)
	fs := rtRun(t, ns, map[string]string{"/etc/resolv.conf": "nameserver 203.0.113.53\n"}, nil)
	want := []string{"pass routes-links-ok", "fail routes-no-default", "warn routes-path-unreachable"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if m := fs[1].Message; m != "no IPv4 default route in any routing table" {
		t.Errorf("message %q", m)
	}
}

// TestRoutesPolicyTables: a second NIC whose default route lives in its own
// table, selected by a source rule, is the correct dual-NIC setup; a guest
// whose only default is in such a table cannot originate traffic.
func TestRoutesPolicyTables(t *testing.T) {
	ns := nstest.New(t)
	rtMgmt(t, ns, 100)
	rtVLAN(t, ns)
	ns.Default(t, "eth1", "198.51.100.1", 0, 100, false)
	ns.Rule(t, "198.51.100.10/32", 100, 1000)
	fs := rtRun(t, ns, nil, nil)
	want := []string{"pass routes-links-ok", "pass routes-default-ok", "pass routes-path"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if d := fs[1].Detail; d["policy_defaults"] != "default via 198.51.100.1 dev eth1 table 100 metric 0 proto dhcp" ||
		d["policy_rules"] != "1000: from 198.51.100.10/32 lookup 100" {
		t.Errorf("detail = %v", d)
	}

	only := nstest.New(t)
	rtMgmt(t, only, -1)
	only.Default(t, "eth0", "192.0.2.1", 0, 200, false)
	only.Rule(t, "192.0.2.10/32", 200, 1000)
	fs = rtRun(t, only, nil, nil)
	f := mustFind(t, fs, "routes-no-default")
	if f.Status != runner.Fail || f.Message != "no IPv4 default route for general traffic; only policy tables 200 have one" {
		t.Errorf("finding = %+v", f)
	}
}

func TestRoutesIPv6Takeover(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", "52:54:00:00:00:10", "192.0.2.10/24", "2001:db8:1::10/64")
	ns.NIC(t, "eth1", "52:54:00:00:00:11", "2001:db8:2::10/64")
	ns.Default(t, "eth0", "192.0.2.1", 100, 0, false)
	ns.Default(t, "eth0", "2001:db8:1::1", 1024, 0, false)
	ns.Default(t, "eth1", "2001:db8:2::1", 100, 0, false)
	fs := rtRun(t, ns, map[string]string{"/etc/resolv.conf": "nameserver 2001:db8:1::53\n"}, nil)
	want := []string{"pass routes-links-ok", "pass routes-default-ok", "fail routes-default-takeover", "pass routes-path"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if m := fs[2].Message; m != "IPv6 default route leaves through eth1 (metric 100), not the expected eth0" {
		t.Errorf("message %q", m)
	}
}

func TestRoutesGatewayAndAsymmetry(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", "52:54:00:00:00:10", "192.0.2.10/24")
	ns.NIC(t, "eth1", "52:54:00:00:00:11", "192.0.2.11/24")
	ns.Default(t, "eth0", "192.0.2.1", 100, 0, false)
	ns.Neigh(t, "eth0", "192.0.2.1", netlink.NUD_FAILED)
	fs := rtRun(t, ns, nil, nil)
	want := []string{"pass routes-links-ok", "pass routes-default-ok", "warn routes-gateway-neigh-failed", "warn routes-asymmetric", "pass routes-path"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if m := fs[2].Message; m != "IPv4 gateway 192.0.2.1 on eth0 does not answer ARP (neighbour entry FAILED)" {
		t.Errorf("message %q", m)
	}
	// A source rule for the second address is what the fix looks like.
	ns.Rule(t, "192.0.2.11/32", 101, 1000)
	if got := codesOf(rtRun(t, ns, nil, nil)); slices.Contains(got, "warn routes-asymmetric") {
		t.Errorf("still asymmetric with a source rule: %v", got)
	}
}

func TestRoutesDownNIC(t *testing.T) {
	ns := nstest.New(t)
	rtMgmt(t, ns, 100)
	l := ns.NIC(t, "eth1", "52:54:00:00:00:11")
	if err := ns.Handle.LinkSetDown(l); err != nil {
		t.Fatal(err)
	}
	fs := rtRun(t, ns, nil, nil)
	f := mustFind(t, fs, "routes-nic-down")
	if f.Status != runner.Warn || f.Message != "eth1 is down" || f.Detail["admin_up"] != "false" {
		t.Errorf("finding = %+v", f)
	}
}

func TestRoutesNotLive(t *testing.T) {
	env := liveEnv(writeRoot(t, map[string]string{"/etc/resolv.conf": ncResolv}), nil, nil)
	env.Live = false
	fs := RunRoutes(context.Background(), env)
	assertConventions(t, fs, Codes)
	if got := codesOf(fs); !slices.Equal(got, []string{"skip routes-not-live"}) || !strings.Contains(fs[0].Message, "needs the running system") {
		t.Errorf("got %+v", fs)
	}
}
