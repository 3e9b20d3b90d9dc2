package seal

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/netconf"
)

// TestNetMACPinsNetworkd: a networkd unit that also matches by name loses
// its [Match] MACAddress= (continuation lines too) and keeps every other
// byte; one that matches by MAC only, and the administrator's netplan
// file, are refused; a drop-in holding the MAC is edited itself.
func TestNetMACPinsNetworkd(t *testing.T) {
	const mac = "52:54:00:12:34:56"
	dir, root := newRoot(t, append(base("debian"),
		f("/etc/systemd/network/30-lan.network", "# lan\n[Match]\nName=eth0\nMACAddress="+mac+" \\\n  52:54:00:00:00:01\n\n[Network]\nDHCP=yes\n"),
		f("/etc/systemd/network/10-lan.link", "[Match]\nOriginalName=eth*\nPermanentMACAddress="+mac+"\n[Link]\nName=lan0\n"),
		f("/etc/systemd/network/40-wan.network", "[Match]\nName=eth1\n[Network]\nDHCP=yes\n"),
		f("/etc/systemd/network/40-wan.network.d/mac.conf", "[Match]\nMACAddress="+mac+"\n"),
		f("/etc/systemd/network/50-only.network", "[Match]\nMACAddress="+mac+"\nHost=template\n[Network]\nDHCP=yes\n"),
		f("/etc/netplan/01-admin.yaml", "network:\n  version: 2\n  ethernets:\n    lan:\n      match:\n        macaddress: \""+mac+"\"\n"),
	))
	ops, _ := Select(All, "net-mac-pins")
	plan := MakePlan(context.Background(), root, ops, Options{})
	refused := map[string]bool{}
	for _, r := range plan.Refusals {
		refused[r.Path] = r.Forcible
	}
	if len(plan.Refusals) != 2 || !refused["/etc/systemd/network/50-only.network"] || !refused["/etc/netplan/01-admin.yaml"] {
		t.Errorf("refusals = %+v", plan.Refusals)
	}
	_, res := applyAll(t, root, ops, Options{Force: true})
	if len(res) != 3 {
		t.Errorf("results = %+v", res)
	}
	want := map[string]string{
		"etc/systemd/network/30-lan.network":            "# lan\n[Match]\nName=eth0\n\n[Network]\nDHCP=yes\n",
		"etc/systemd/network/10-lan.link":               "[Match]\nOriginalName=eth*\n[Link]\nName=lan0\n",
		"etc/systemd/network/40-wan.network.d/mac.conf": "[Match]\n",
		"etc/systemd/network/50-only.network":           "[Match]\nMACAddress=" + mac + "\nHost=template\n[Network]\nDHCP=yes\n",
	}
	for p, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(b) != w {
			t.Errorf("%s = %q (%v), want %q", p, b, err, w)
		}
	}
	again := MakePlan(context.Background(), root, ops, Options{})
	if len(again.Actions) != 0 || len(again.Refusals) != 2 {
		t.Errorf("verify after apply: actions %+v, refusals %+v (want the two refusals still)", again.Actions, again.Refusals)
	}
}

// TestNetMACPinsThatSetTheMAC: configuration that gives the NIC the
// template's MAC (ifcfg MACADDR=, an address in NetworkManager's
// cloned-mac-address, ifupdown's hwaddress) is a pin too, found by
// netconf.MACBindings as guestcheck finds it, and goes; a
// cloned-mac-address policy ("stable") stays.
func TestNetMACPinsThatSetTheMAC(t *testing.T) {
	const mac = "52:54:00:12:34:56"
	dir, root := newRoot(t, append(base("debian"),
		f("/etc/sysconfig/network-scripts/ifcfg-eth0", "DEVICE=eth0\nMACADDR="+mac+"\nBOOTPROTO=dhcp\n"),
		f("/etc/NetworkManager/system-connections/lan.nmconnection", "[connection]\nid=lan\ntype=ethernet\n[ethernet]\ncloned-mac-address="+mac+"\n[ipv4]\nmethod=auto\n"),
		f("/etc/NetworkManager/system-connections/wan.nmconnection", "[connection]\nid=wan\ntype=ethernet\n[ethernet]\ncloned-mac-address=stable\n[ipv4]\nmethod=auto\n"),
		f("/etc/network/interfaces", "auto eth0\niface eth0 inet dhcp\n    hwaddress ether "+mac+"\n"),
	))
	if bs := netconf.MACBindings(netconf.ReadFacts(root)); len(bs) != 3 {
		t.Fatalf("bindings before = %+v, want MACADDR, cloned-mac-address and hwaddress", bs)
	}
	ops, _ := Select(All, "net-mac-pins")
	if _, res := applyAll(t, root, ops, Options{}); len(res) != 3 {
		t.Errorf("results = %+v", res)
	}
	want := map[string]string{
		"etc/sysconfig/network-scripts/ifcfg-eth0":               "DEVICE=eth0\nBOOTPROTO=dhcp\n",
		"etc/NetworkManager/system-connections/lan.nmconnection": "[connection]\nid=lan\ntype=ethernet\n[ethernet]\n[ipv4]\nmethod=auto\n",
		"etc/NetworkManager/system-connections/wan.nmconnection": "[connection]\nid=wan\ntype=ethernet\n[ethernet]\ncloned-mac-address=stable\n[ipv4]\nmethod=auto\n",
		"etc/network/interfaces":                                 "auto eth0\niface eth0 inet dhcp\n",
	}
	for p, w := range want {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || string(b) != w {
			t.Errorf("%s = %q (%v), want %q", p, b, err, w)
		}
	}
	if bs := netconf.MACBindings(netconf.ReadFacts(root)); len(bs) != 0 {
		t.Errorf("bindings after = %+v", bs)
	}
}
