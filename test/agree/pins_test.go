package agree

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// templateBase is a sealed template but for what a case adds: systemd,
// an empty /etc/machine-id, no sshd, no cloud-init.
func templateBase() []node {
	return append(osBase(),
		file("/usr/lib/systemd/systemd", "ELF"),
		fileMode("/etc/machine-id", "", 0o444),
		file("/etc/hosts", "127.0.0.1 localhost\n"))
}

// TestSealsDHCPAndMACPins holds issue 29's property for each DHCP client
// state and MAC pin the generator makes: before apply, verify calls the
// template NOT-SEALED for the item and guestcheck --root flags it; after
// `sealprep apply`, verify says SEALED and guestcheck reports no identity
// of the item left.
func TestSealsDHCPAndMACPins(t *testing.T) {
	cases := []struct {
		name, item string
		nodes      []node
	}{
		{"dhcpcd-etc-duid", "dhcp-client-state", dhcpcdNodes("dhcpcd-etc-duid")},
		{"dhcpcd-duid", "dhcp-client-state", dhcpcdNodes("dhcpcd-duid")},
		{"dhcpcd-secret-leases", "dhcp-client-state", dhcpcdNodes("dhcpcd-state")},
		{"dhcpcd-6-lease", "dhcp-client-state", []node{file("/var/db/dhcpcd-eth0.lease", "LEASE"), file("/etc/dhcpcd.secret", "S")}},
		{"dhcpcd-default-dbdir", "dhcp-client-state", []node{file("/var/db/dhcpcd/duid", "00:04:11:22:33:44:55:66:77:88\n")}},
		{"networkd-mac", "mac-bindings", macPinNodes("networkd-mac")},
		{"networkd-mac-dropin", "mac-bindings", []node{file("/etc/systemd/network/30-lan.network", "[Match]\nName=eth0\n\n[Network]\nDHCP=yes\n"),
			file("/etc/systemd/network/30-lan.network.d/mac.conf", "[Match]\nMACAddress="+templateMAC+"\n")}},
		{"link-mac", "mac-bindings", macPinNodes("link-mac")},
		{"nm-mac", "mac-bindings", macPinNodes("nm-mac")},
		{"ifcfg-hwaddr", "mac-bindings", macPinNodes("ifcfg-hwaddr")},
		{"cloud-init-networkd", "mac-bindings", []node{file("/usr/bin/cloud-init", "#!/usr/bin/python3\n"), file("/etc/cloud/cloud.cfg", "users: [default]\n"),
			file("/etc/systemd/network/10-cloud-init-eth0.network", "[Match]\nMACAddress="+templateMAC+"\n\n[Network]\nDHCP=ipv4\n")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			it := itemNamed(tc.item)
			dir := filepath.Join(t.TempDir(), "root")
			buildRoot(t, dir, append(templateBase(), tc.nodes...))
			before := judge(t, dir)
			if !before.template() {
				t.Fatalf("guestcheck did not judge the root as a template")
			}
			if before.verify.Status != "not-sealed" || before.verdict(it) != notSealed {
				t.Errorf("before apply: verify %s, %s %s; want not-sealed", before.verify.Status, it.name, before.verdict(it))
			}
			if len(before.findings(it)) == 0 {
				t.Errorf("before apply: guestcheck --root does not flag %s", it.name)
			}
			apply(t, dir)
			after := judge(t, dir)
			if after.verify.Status != "sealed" || after.verdict(it) != sealed {
				t.Errorf("after apply: verify %s, %s %s (%v); want sealed", after.verify.Status, it.name, after.verdict(it), after.leftovers(it))
			}
			if fs := after.findings(it); len(fs) > 0 {
				t.Errorf("after apply: guestcheck --root still reports %v", fs)
			}
		})
	}
}

// TestRefusesMACPinsItCannotEdit: a MAC match sealprep does not edit (a
// networkd unit matching by MAC only, the administrator's netplan YAML)
// makes apply refuse and verify say NOT-SEALED, before and after, while
// guestcheck --root flags it.
func TestRefusesMACPinsItCannotEdit(t *testing.T) {
	cases := []struct {
		name  string
		nodes []node
	}{
		{"networkd-mac-only", []node{file("/etc/systemd/network/30-lan.network", "[Match]\nMACAddress="+templateMAC+"\n\n[Network]\nDHCP=yes\n")}},
		{"link-mac-only", []node{file("/etc/systemd/network/10-lan.link", "[Match]\nMACAddress="+templateMAC+"\n\n[Link]\nName=lan0\n")}},
		{"netplan-admin", []node{fileMode("/etc/netplan/01-lan.yaml", "network:\n  version: 2\n  ethernets:\n    lan:\n      match:\n        macaddress: \""+templateMAC+"\"\n      dhcp4: true\n      dhcp-identifier: mac\n", 0o600)}},
		{"netplan-cloud-init-disabled", []node{file("/usr/bin/cloud-init", "#!/usr/bin/python3\n"), file("/etc/cloud/cloud.cfg", "users: [default]\n"),
			file("/etc/cloud/cloud-init.disabled", ""),
			fileMode("/etc/netplan/50-cloud-init.yaml", "network:\n  version: 2\n  ethernets:\n    eth0:\n      match:\n        macaddress: \""+templateMAC+"\"\n      dhcp4: true\n      dhcp-identifier: mac\n", 0o600)}},
	}
	it := itemNamed("mac-bindings")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "root")
			buildRoot(t, dir, append(templateBase(), tc.nodes...))
			for _, when := range []string{"before apply", "after a refused apply"} {
				v := judge(t, dir)
				if v.verify.Status != "not-sealed" || v.verdict(it) != notSealed {
					t.Errorf("%s: verify %s, %s %s; want not-sealed", when, v.verify.Status, it.name, v.verdict(it))
				}
				if len(v.findings(it)) == 0 {
					t.Errorf("%s: guestcheck --root does not flag the pin", when)
				}
				if when == "before apply" {
					out, err := exec.Command(bin.sealprep, "apply", "--yes", "--root", dir).CombinedOutput()
					if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 || !strings.Contains(string(out), "net-mac-pins") {
						t.Errorf("apply: %v, want a refusal by net-mac-pins (exit 3)\n%s", err, out)
					}
				}
			}
		})
	}
}
