package netconf

import (
	"slices"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
)

// TestReadFacts checks the one walk both network checks take their files
// from: overlay precedence, netplan's own output left out, drop-ins
// appended, ifupdown's includes followed and cloud-init's markers seen.
func TestReadFacts(t *testing.T) {
	root := nstest.WriteRoot(t, map[string]string{
		"lib/netplan/50-a.yaml":                                "network: {ethernets: {eth9: {}}}\n",
		"etc/netplan/50-a.yaml":                                "network: {ethernets: {eth0: {dhcp4: true}}}\n",
		"etc/netplan/60-b.yml":                                 "network: {ethernets: {eth1: {}}}\n",
		"etc/netplan/notes.txt":                                "not netplan",
		"run/systemd/network/10-netplan-eth0.network":          "[Match]\nName=eth0\n",
		"etc/systemd/network/20-lan.network":                   "[Match]\nName=eth1\n",
		"etc/systemd/network/20-lan.network.d/mtu.conf":        "[Link]\nMTUBytes=1400\n",
		"etc/systemd/network/30-bond.netdev":                   "[NetDev]\nName=bond0\nKind=bond\n",
		"etc/systemd/networkd.conf":                            "[DHCPv4]\nDUIDType=link-layer\n",
		"etc/NetworkManager/system-connections/x.nmconnection": "[connection]\nid=x\n",
		"etc/sysconfig/network-scripts/ifcfg-eth0":             "# Created by cloud-init\nDEVICE=eth0\nBOOTPROTO=dhcp\n",
		"etc/sysconfig/network-scripts/ifcfg-lo":               "DEVICE=lo\n",
		"etc/network/interfaces":                               "source interfaces.d/*\n",
		"etc/network/interfaces.d/50-cloud-init":               "iface eth0 inet dhcp\n",
		"etc/udev/rules.d/70-persistent-net.rules":             `SUBSYSTEM=="net", ATTR{address}=="52:54:00:00:00:01", NAME="eth0"` + "\n",
	})
	f := ReadFacts(root)

	var netplans []string
	for _, n := range f.Netplan {
		netplans = append(netplans, n.Path)
	}
	if want := []string{"/etc/netplan/50-a.yaml", "/etc/netplan/60-b.yml"}; !slices.Equal(netplans, want) {
		t.Errorf("netplan files %v, want %v", netplans, want)
	}
	if !f.NetplanRendered {
		t.Error("netplan's networkd output not noticed")
	}
	var units []string
	for _, u := range f.Networkd {
		units = append(units, u.Path)
	}
	if want := []string{"/etc/systemd/network/20-lan.network", "/etc/systemd/network/30-bond.netdev"}; !slices.Equal(units, want) {
		t.Errorf("networkd units %v, want %v", units, want)
	}
	if n := len(f.Networkd[0].INI.Entries); n != 2 {
		t.Errorf("20-lan.network has %d entries with its drop-in, want 2", n)
	}
	if len(f.NetworkdConf) != 1 || len(f.NM) != 1 {
		t.Errorf("networkd.conf %d, NetworkManager %d files, want 1 and 1", len(f.NetworkdConf), len(f.NM))
	}
	if len(f.Ifcfg) != 1 || !f.Ifcfg[0].CloudInit || !f.Ifcfg[0].IfaceOK || f.Ifcfg[0].Iface.Name != "eth0" {
		t.Errorf("ifcfg = %+v, want eth0 by cloud-init (ifcfg-lo left out)", f.Ifcfg)
	}
	if !f.ENICloudInit || len(f.ENI) != 2 || !f.ENI[1].OK || len(f.ENI[1].File.Stanzas) != 1 {
		t.Errorf("ENI: cloud-init %v, files %+v", f.ENICloudInit, f.ENI)
	}
	if !f.PersistentNet.OK || len(f.PersistentNet.Rules) != 1 {
		t.Errorf("persistent-net rules %+v", f.PersistentNet)
	}
	for _, c := range f.CloudInitJSON {
		if c.OK || len(c.Unreadable) > 0 {
			t.Errorf("absent %s read as %+v", c.Path, c.Read)
		}
	}
}

// TestReadUse checks that a file's unreadable parts are reported to each
// judge that takes it, and only then.
func TestReadUse(t *testing.T) {
	var unreadable []string
	if !(Read{OK: true}).Use(&unreadable) || len(unreadable) != 0 {
		t.Fatal("a read file")
	}
	if (Read{Unreadable: []string{"/etc/x: permission denied"}}).Use(&unreadable) || !slices.Equal(unreadable, []string{"/etc/x: permission denied"}) {
		t.Fatalf("an unreadable file: %v", unreadable)
	}
}
