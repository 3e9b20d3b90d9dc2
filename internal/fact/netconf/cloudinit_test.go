package netconf

import (
	"slices"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
)

// TestCloudInitMACs: the MACs cloud-init's instance names come from its
// network-config.json and the files it rendered, never from the
// administrator's own files; its udev rules count only beside a
// configuration cloud-init rendered for ifupdown or ifcfg.
func TestCloudInitMACs(t *testing.T) {
	files := map[string]string{
		"var/lib/cloud/instance/network-config.json":     `{"version": 1, "config": [{"type": "physical", "name": "eth0", "mac_address": "52:54:00:0a:00:01", "subnets": [{"type": "dhcp"}]}]}`,
		"run/cloud-init/network-config.json":             `{"version": 1, "config": [{"type": "physical", "name": "eth0", "mac_address": "52:54:00:0a:00:99"}]}`,
		"etc/netplan/50-cloud-init.yaml":                 "network:\n  version: 2\n  ethernets:\n    eth0:\n      match: {macaddress: \"52:54:00:0a:00:02\"}\n      set-name: eth0\n      dhcp4: true\n",
		"etc/netplan/60-admin.yaml":                      "network:\n  version: 2\n  ethernets:\n    lan:\n      match: {macaddress: \"52:54:00:0b:00:01\"}\n",
		"etc/systemd/network/10-cloud-init-eth0.network": "[Match]\nMACAddress=52:54:00:0a:00:03\n[Network]\nDHCP=yes\n",
		"etc/systemd/network/20-lan.network":             "[Match]\nMACAddress=52:54:00:0b:00:02\n",
		"etc/udev/rules.d/70-persistent-net.rules":       `SUBSYSTEM=="net", ATTR{address}=="52:54:00:0a:00:04", NAME="eth0"` + "\n",
	}
	macs := func(files map[string]string) []string {
		var out []string
		for _, b := range CloudInitMACs(ReadFacts(nstest.WriteRoot(t, files))) {
			out = append(out, b.MAC.String())
		}
		return out
	}
	if got, want := macs(files), []string{"52:54:00:0a:00:01", "52:54:00:0a:00:02", "52:54:00:0a:00:03"}; !slices.Equal(got, want) {
		t.Errorf("MACs %v, want %v (the instance's network-config, not /run's, and no admin file or udev rule)", got, want)
	}
	files["etc/network/interfaces"] = "source interfaces.d/*\n"
	files["etc/network/interfaces.d/50-cloud-init"] = "auto eth0\niface eth0 inet dhcp\n"
	if got := macs(files); !slices.Contains(got, "52:54:00:0a:00:04") {
		t.Errorf("MACs %v: the udev rule cloud-init's ifupdown renderer wrote is left out", got)
	}
	if got := macs(map[string]string{"etc/systemd/network/20-lan.network": "[Match]\nMACAddress=52:54:00:0b:00:02\n"}); len(got) != 0 {
		t.Errorf("no cloud-init state: MACs %v, want none", got)
	}
}
