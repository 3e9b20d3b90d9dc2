package guestid

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/parse/dhcplease"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

const testMachineID = "0102030405060708090a0b0c0d0e0f10"

// openRoot opens a test tree as a guest root, closed when the test ends.
var openRoot = nstest.OpenRoot

// hostKey makes a template's ed25519 key pair (testenv.HostKeyPair).
func hostKey(t testing.TB) (priv, pub, fp string) {
	t.Helper()
	return testenv.HostKeyPair(t, "root@template")
}

// fullTree is an image root with every identity item.
func fullTree(t testing.TB) (files map[string]string, keyFP, defaultFP string) {
	priv, _, fp := hostKey(t)
	_, dpub, dfp := hostKey(t)
	files = map[string]string{
		"/etc/machine-id":                                       testMachineID + "\n",
		"/etc/ssh/sshd_config":                                  "Include /etc/ssh/sshd_config.d/*.conf\nPort 22\n",
		"/etc/ssh/sshd_config.d/keys.conf":                      "HostKey /etc/ssh/custom_key\n",
		"/etc/ssh/custom_key":                                   priv,
		"/etc/ssh/ssh_host_ed25519_key.pub":                     dpub, // not configured: not sshd's
		"/var/lib/cloud/data/instance-id":                       "i-0abc123\n",
		"/etc/hostname":                                         "web-1\n",
		"/etc/netplan/50-cloud-init.yaml":                       "network:\n  version: 2\n  ethernets:\n    eth0:\n      match:\n        macaddress: \"52:54:00:AA:00:01\"\n      set-name: eth0\n      dhcp4: true\n",
		"/etc/systemd/network/10-eth1.network":                  "[Match]\nMACAddress=52:54:00:aa:00:02\n\n[Network]\nDHCP=ipv4\n",
		"/etc/systemd/network/10-eth2.link":                     "[Match]\nMACAddress=52:54:00:aa:00:03\n\n[Link]\nName=lan2\n",
		"/etc/NetworkManager/system-connections/x.nmconnection": "[connection]\nid=x\ntype=ethernet\n\n[ethernet]\nmac-address=52:54:00:AA:00:04\n",
		"/etc/sysconfig/network-scripts/ifcfg-eth5":             "DEVICE=eth5\nHWADDR=52:54:00:aa:00:05\nBOOTPROTO=dhcp\n",
		"/etc/udev/rules.d/70-persistent-net.rules":             "SUBSYSTEM==\"net\", ACTION==\"add\", ATTR{address}==\"52:54:00:aa:00:06\", NAME=\"eth6\"\n",
		"/var/lib/dhcp/dhclient.eth0.leases":                    "lease {\n  interface \"eth0\";\n  option dhcp-client-identifier 1:52:54:0:aa:0:1;\n}\nlease {\n  interface \"eth0\";\n  option dhcp-client-identifier 1:52:54:0:aa:0:9;\n}\n",
		"/var/lib/dhcp/dhclient6.leases":                        "default-duid \"\\000\\001\\000\\001.\\215\\222\\226RT\\000\\0224V\";\nlease6 {\n  interface \"eth0\";\n  option dhcp6.client-id 0:1:0:1:2e:8d:92:96:52:54:0:12:34:56;\n}\n",
		"/var/lib/dhcp/other.txt":                               "not a lease file {",
		"/var/lib/dhcpcd/duid":                                  "00:04:11:22:33:44:55:66:77:88\n",
		"/var/lib/NetworkManager/internal-0a6e7b3c-1d2e-4f50-8a9b-0c1d2e3f4a5b-enp7s0.lease": "ADDRESS=192.0.2.7\nCLIENTID=01525400aa0007\n",
		"/var/lib/NetworkManager/dhclient-0a6e7b3c-1d2e-4f50-8a9b-0c1d2e3f4a5c-enp8s0.lease": "lease {\n  option dhcp-client-identifier \"vm8\";\n}\n",
	}
	return files, fp, dfp
}

func TestReadImage(t *testing.T) {
	files, fp, _ := fullTree(t)
	id := Read(openRoot(t, testenv.WriteTree(t, files)), false)
	wantHash, _ := MachineIDHash(testMachineID)
	if id.MachineIDState != "valid" || id.MachineIDHash != wantHash {
		t.Errorf("machine-id %q %q", id.MachineIDState, id.MachineIDHash)
	}
	if want := []HostKey{{Type: "ssh-ed25519", Fingerprint: fp, Path: "/etc/ssh/custom_key"}}; !reflect.DeepEqual(id.HostKeys, want) {
		t.Errorf("host keys %+v, want %+v", id.HostKeys, want)
	}
	if id.InstanceID != "i-0abc123" || id.Hostname != "web-1" || id.Interfaces != nil {
		t.Errorf("instance-id %q hostname %q interfaces %v", id.InstanceID, id.Hostname, id.Interfaces)
	}
	var macs []string
	for _, b := range id.MACBindings {
		macs = append(macs, b.MAC+" "+b.Kind+" "+b.At)
	}
	wantMACs := []string{
		"52:54:00:aa:00:02 systemd-networkd [Match] MACAddress= /etc/systemd/network/10-eth1.network:2",
		"52:54:00:aa:00:03 systemd .link [Match] MACAddress= /etc/systemd/network/10-eth2.link:2",
		"52:54:00:aa:00:04 NetworkManager mac-address /etc/NetworkManager/system-connections/x.nmconnection:6",
		"52:54:00:aa:00:05 ifcfg HWADDR /etc/sysconfig/network-scripts/ifcfg-eth5:2",
		"52:54:00:aa:00:06 udev 70-persistent-net.rules /etc/udev/rules.d/70-persistent-net.rules:1",
		"52:54:00:aa:00:01 netplan match: macaddress /etc/netplan/50-cloud-init.yaml:6",
	}
	if !slices.Equal(macs, wantMACs) {
		t.Errorf("MAC bindings\n%s\nwant\n%s", strings.Join(macs, "\n"), strings.Join(wantMACs, "\n"))
	}
	duid, _ := NetworkdDUID(testMachineID)
	want := []DHCPClient{
		{Kind: "client-id", Value: "01:52:54:00:aa:00:09", Source: "/var/lib/dhcp/dhclient.eth0.leases:7", Interface: "eth0"},
		{Kind: "duid", Value: "00:01:00:01:2e:8d:92:96:52:54:00:12:34:56", Source: "/var/lib/dhcp/dhclient6.leases:1"},
		{Kind: "duid", Value: "00:04:11:22:33:44:55:66:77:88", Source: "/var/lib/dhcpcd/duid"},
		{Kind: "client-id", Value: "76:6d:38", Source: "/var/lib/NetworkManager/dhclient-0a6e7b3c-1d2e-4f50-8a9b-0c1d2e3f4a5c-enp8s0.lease:2", Interface: "enp8s0"},
		{Kind: "client-id", Value: "01:52:54:00:aa:00:07", Source: "/var/lib/NetworkManager/internal-0a6e7b3c-1d2e-4f50-8a9b-0c1d2e3f4a5b-enp7s0.lease:2", Interface: "enp7s0"},
		{Kind: "duid", Value: dhcplease.Hex(duid), Source: "systemd-networkd: DUID-EN from /etc/machine-id (/etc/systemd/network/10-eth1.network:5)"},
	}
	if !reflect.DeepEqual(id.DHCPClients, want) {
		t.Errorf("DHCP clients\n%+v\nwant\n%+v", id.DHCPClients, want)
	}
	if id.Unread != nil {
		t.Errorf("unread %q", id.Unread)
	}
	noRawMachineID(t, id, testMachineID)
}

// noRawMachineID fails when the machine ID appears in the identity's JSON
// in any form: machine-id(5) asks that it never leave the machine.
func noRawMachineID(t *testing.T, id Identity, mid string) {
	t.Helper()
	b, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ToLower(strings.NewReplacer(":", "", "-", "").Replace(string(b)))
	if strings.Contains(s, strings.ToLower(mid)) {
		t.Errorf("the raw machine ID is in the identity: %s", b)
	}
}

func TestReadLive(t *testing.T) {
	files, _, _ := fullTree(t)
	files["/proc/sys/kernel/hostname"] = "vm-7\n"
	files["/run/systemd/netif/leases/2"] = "# This is private data. Do not parse.\nADDRESS=192.0.2.10\nCLIENTID=ff0ad7b65f00020000ab11617740de1342c3a2\n"
	files["/sys/class/net/eth0/ifindex"] = "2\n"
	files["/sys/class/net/lo/ifindex"] = "1\n"
	id := Read(openRoot(t, testenv.WriteTree(t, files)), true)
	if id.Hostname != "vm-7" {
		t.Errorf("live hostname %q, want the kernel's", id.Hostname)
	}
	last := id.DHCPClients[len(id.DHCPClients)-1]
	if want := (DHCPClient{Kind: "client-id", Value: "ff:0a:d7:b6:5f:00:02:00:00:ab:11:61:77:40:de:13:42:c3:a2", Source: "/run/systemd/netif/leases/2:3", Interface: "eth0"}); last != want {
		t.Errorf("last DHCP client %+v, want %+v", last, want)
	}
	for _, c := range id.DHCPClients {
		if strings.HasPrefix(c.Source, "systemd-networkd:") {
			t.Errorf("derived DUID reported beside networkd's lease: %+v", c)
		}
	}
}

func TestReadNetworkdDUID(t *testing.T) {
	duid, _ := NetworkdDUID(testMachineID)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // the Source of the derived DUID, "" for none
	}{
		{"dhcpv4 default", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n"}, "/etc/systemd/network/a.network:2"},
		{"ipv4 by mac", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=ipv4\n[DHCPv4]\nClientIdentifier=mac\n"}, ""},
		{"ipv6 despite mac client id", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n[DHCPv4]\nClientIdentifier=mac\n"}, "/etc/systemd/network/a.network:2"},
		{"link-layer in networkd.conf", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n", "/etc/systemd/networkd.conf": "[DHCPv4]\nDUIDType=link-layer\n"}, ""},
		{"vendor in a drop-in", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n", "/etc/systemd/networkd.conf.d/x.conf": "[DHCPv6]\nDUIDType=vendor\n"}, "/etc/systemd/network/a.network:2"},
		{"raw data in the network", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n[DHCPv6]\nDUIDRawData=00:00:ab:11:01\n"}, ""},
		{"uuid in [DHCP]", map[string]string{"/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n[DHCP]\nDUIDType=uuid\n"}, ""},
		{"static only", map[string]string{"/etc/systemd/network/a.network": "[Network]\nAddress=192.0.2.5/24\n"}, ""},
		{"netplan networkd", map[string]string{"/etc/netplan/a.yaml": "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n"}, "/etc/netplan/a.yaml:5"},
		{"netplan dhcp-identifier mac", map[string]string{"/etc/netplan/a.yaml": "network:\n  version: 2\n  ethernets:\n    eth0:\n      dhcp4: true\n      dhcp-identifier: mac\n"}, ""},
		{"netplan NetworkManager", map[string]string{"/etc/netplan/a.yaml": "network:\n  version: 2\n  renderer: NetworkManager\n  ethernets:\n    eth0:\n      dhcp6: true\n"}, ""},
		{"no machine id", map[string]string{"/etc/machine-id": "", "/etc/systemd/network/a.network": "[Network]\nDHCP=yes\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"/etc/machine-id": testMachineID + "\n"}
			for k, v := range tc.files {
				files[k] = v
			}
			id := Read(openRoot(t, testenv.WriteTree(t, files)), false)
			var got string
			for _, c := range id.DHCPClients {
				if src, ok := strings.CutPrefix(c.Source, "systemd-networkd: DUID-EN from /etc/machine-id ("); ok {
					if c.Kind != KindDUID || c.Value != dhcplease.Hex(duid) {
						t.Errorf("derived %+v", c)
					}
					got = strings.TrimSuffix(src, ")")
				}
			}
			if got != tc.want {
				t.Errorf("derived DUID from %q, want %q (%+v)", got, tc.want, id.DHCPClients)
			}
		})
	}
}

func TestReadMachineIDStates(t *testing.T) {
	for _, tc := range []struct {
		content, state string
		hashed         bool
	}{
		{testMachineID + "\n", "valid", true},
		{strings.ToUpper(testMachineID), "valid", true},
		{"", "empty", false},
		{"uninitialized\n", "uninitialized", false},
		{strings.Repeat("0", 32) + "\n", "all zero", false},
		{"not-an-id\n", "not a machine ID", false},
	} {
		id := Read(openRoot(t, testenv.WriteTree(t, map[string]string{"/etc/machine-id": tc.content})), false)
		if id.MachineIDState != tc.state || (id.MachineIDHash != "") != tc.hashed {
			t.Errorf("%q: state %q hash %q", tc.content, id.MachineIDState, id.MachineIDHash)
		}
	}
	id := Read(openRoot(t, t.TempDir()), false)
	if id.MachineIDState != StateMissing || id.MachineIDHash != "" || id.Unread != nil {
		t.Errorf("empty root: %+v", id)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc/machine-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	id = Read(openRoot(t, dir), false)
	if id.MachineIDState != StateUnreadable || len(id.Unread) != 1 || !strings.HasPrefix(id.Unread[0], "machine-id: /etc/machine-id: ") {
		t.Errorf("machine-id a directory: %+v", id)
	}
}

// TestReadRecordHash: the record's hashes come from the same read as the
// identity, under sealprep's rule (any ID systemd keeps); the current
// one is the report's machine_id_hash, and version 1's plain SHA-256 is
// not in the identity's JSON, which reports carry.
func TestReadRecordHash(t *testing.T) {
	zero := strings.Repeat("0", 32)
	for _, tc := range []struct {
		content string
		want    sealrecord.IDHash
	}{
		{testMachineID + "\n", sealrecord.HashID(testMachineID)},
		{strings.ToUpper(testMachineID), sealrecord.HashID(testMachineID)},
		{zero + "\n", sealrecord.HashID(zero)},
		{"", sealrecord.IDHash{}},
		{"uninitialized\n", sealrecord.IDHash{}},
		{"not-an-id\n", sealrecord.IDHash{}},
	} {
		root := openRoot(t, testenv.WriteTree(t, map[string]string{"/etc/machine-id": tc.content}))
		id, h := ReadWithRecordHash(root, false)
		if h != tc.want {
			t.Errorf("%q: record hash %q, want %q", tc.content, h, tc.want)
		}
		if plain := Read(root, false); !reflect.DeepEqual(id, plain) {
			t.Errorf("%q: the identity differs from Read's: %+v, %+v", tc.content, id, plain)
		}
		if b, err := json.Marshal(id); err != nil || (h.LegacySHA256 != "" && strings.Contains(string(b), h.LegacySHA256)) {
			t.Errorf("%q: the version 1 record hash is in the identity's JSON (%v): %s", tc.content, err, b)
		}
		if h.Hash != "" && id.MachineIDState == "valid" && h.Hash != id.MachineIDHash {
			t.Errorf("%q: record hash %s, report's machine_id_hash %s: they must compare", tc.content, h.Hash, id.MachineIDHash)
		}
	}
	if _, h := ReadWithRecordHash(openRoot(t, t.TempDir()), false); h != (sealrecord.IDHash{}) {
		t.Errorf("no machine-id: record hash %q", h)
	}
}

func TestReadHostKeys(t *testing.T) {
	priv, pub, fp := hostKey(t)
	_, pub2, fp2 := hostKey(t)
	priv3, _, fp3 := hostKey(t)
	files := map[string]string{
		// No sshd_config: sshd's three defaults.
		"/etc/ssh/ssh_host_ed25519_key":     priv,
		"/etc/ssh/ssh_host_ed25519_key.pub": pub,
		// The .pub wins over a private key that does not parse.
		"/etc/ssh/ssh_host_ecdsa_key":     "garbage",
		"/etc/ssh/ssh_host_ecdsa_key.pub": pub2,
		// No .pub: the private key's public half.
		"/etc/ssh/ssh_host_rsa_key": priv3,
	}
	id := Read(openRoot(t, testenv.WriteTree(t, files)), false)
	want := []HostKey{
		{Type: "ssh-ed25519", Fingerprint: fp3, Path: "/etc/ssh/ssh_host_rsa_key"},
		{Type: "ssh-ed25519", Fingerprint: fp2, Path: "/etc/ssh/ssh_host_ecdsa_key"},
		{Type: "ssh-ed25519", Fingerprint: fp, Path: "/etc/ssh/ssh_host_ed25519_key"},
	}
	if !reflect.DeepEqual(id.HostKeys, want) || id.Unread != nil {
		t.Errorf("host keys %+v unread %q", id.HostKeys, id.Unread)
	}
	// Neither half usable: noted, not guessed.
	files = map[string]string{
		"/etc/ssh/sshd_config":              "HostKey /etc/ssh/k\nHostKey /etc/ssh/gone\n",
		"/etc/ssh/k":                        "garbage",
		"/etc/ssh/k.pub":                    "ssh-ed25519 !!!\n",
		"/etc/ssh/ssh_host_ed25519_key.pub": pub,
	}
	id = Read(openRoot(t, testenv.WriteTree(t, files)), false)
	if id.HostKeys != nil || len(id.Unread) != 1 || !strings.HasPrefix(id.Unread[0], "ssh-host-key: /etc/ssh/k: ") || strings.Contains(id.Unread[0], "\n") {
		t.Errorf("host keys %+v unread %q", id.HostKeys, id.Unread)
	}
}

func TestReadDegraded(t *testing.T) {
	files := map[string]string{
		"/var/lib/cloud/data/instance-id": "i-1\x1b[31m\n",
		"/etc/hostname":                   "a\x00b\n",
		"/var/lib/dhcp/dhclient.leases":   "lease {\n option dhcp-client-identifier 1:zz;\n}\n}\n",
		"/etc/dhcpcd.duid":                "00:01\n",
	}
	id := Read(openRoot(t, testenv.WriteTree(t, files)), false)
	want := []string{
		"instance-id: /var/lib/cloud/data/instance-id: not one printable line of at most 255 bytes",
		"hostname: /etc/hostname: not a host name",
		`dhcp-client-id: /var/lib/dhcp/dhclient.leases:2: option dhcp-client-identifier "1:zz": byte 2 is not hexadecimal (and 1 more)`,
		"dhcp-client-id: /etc/dhcpcd.duid:1: not a DUID: 2 bytes, want 3 to 130",
	}
	if !slices.Equal(id.Unread, want) || id.InstanceID != "" || id.Hostname != "" || id.DHCPClients != nil {
		t.Errorf("unread\n%s\nwant\n%s\n%+v", strings.Join(id.Unread, "\n"), strings.Join(want, "\n"), id)
	}
}

// agentReader stands for a reader over the guest agent: it reads and
// stats files, and cannot list a directory or read a link.
type agentReader struct{ *fs.Root }

var errNoList = errors.New("the guest agent cannot list directories")

func (a agentReader) ReadDir(string) ([]fs.Entry, error) { return nil, errNoList }
func (a agentReader) Readlink(string) (string, error)    { return "", errNoList }

func TestReadWithoutListing(t *testing.T) {
	files, _, dfp := fullTree(t)
	// With no sshd_config the defaults are read by name.
	delete(files, "/etc/ssh/sshd_config")
	files["/var/lib/dhcp/dhclient.leases"] = files["/var/lib/dhcp/dhclient.eth0.leases"]
	id := Read(agentReader{openRoot(t, testenv.WriteTree(t, files))}, false)
	want, _ := MachineIDHash(testMachineID)
	if id.MachineIDHash != want || id.InstanceID != "i-0abc123" || id.Hostname != "web-1" {
		t.Errorf("known paths not read: %+v", id)
	}
	if len(id.HostKeys) != 1 || id.HostKeys[0].Fingerprint != dfp {
		t.Errorf("host keys %+v", id.HostKeys)
	}
	var srcs []string
	for _, c := range id.DHCPClients {
		srcs = append(srcs, c.Source)
	}
	if !slices.Equal(srcs, []string{"/var/lib/dhcp/dhclient.leases:7", "/var/lib/dhcp/dhclient6.leases:1", "/var/lib/dhcpcd/duid"}) {
		t.Errorf("DHCP sources %q", srcs)
	}
	for _, it := range []Item{ItemMACBinding, ItemDHCPClient} {
		if !slices.ContainsFunc(id.Unread, func(u string) bool {
			return strings.HasPrefix(u, string(it)+": ") && strings.Contains(u, errNoList.Error())
		}) {
			t.Errorf("no unread entry for %s: %q", it, id.Unread)
		}
	}
}

// TestReadersAgree: guestcheck's Root and sealprep's Confined give the
// same identity for the same tree.
func TestReadersAgree(t *testing.T) {
	files, _, _ := fullTree(t)
	dir := testenv.WriteTree(t, files)
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if a, b := Read(openRoot(t, dir), false), Read(c, false); !reflect.DeepEqual(a, b) {
		t.Errorf("Root and Confined disagree:\n%+v\n%+v", a, b)
	}
}

// TestReadDhcpcdDUIDs reads dhcpcd's DUID where each version keeps it
// (dhcpcd(8) FILES): /etc/dhcpcd.duid up to dhcpcd 6, DBDIR/duid since
// 7, with DBDIR as distributions build it (/var/lib/dhcpcd) and by
// default (/var/db/dhcpcd).
func TestReadDhcpcdDUIDs(t *testing.T) {
	files := map[string]string{
		"/etc/dhcpcd.duid":     "00:01:00:01:2c:3d:4e:5f:52:54:00:12:34:56\n",
		"/var/lib/dhcpcd/duid": "00:04:11:22:33:44:55:66:77:88\n",
		"/var/db/dhcpcd/duid":  "00:04:aa:bb:cc:dd:ee:ff:00:11\n",
	}
	id := Read(openRoot(t, testenv.WriteTree(t, files)), false)
	var got []string
	for _, c := range id.DHCPClients {
		got = append(got, c.Kind+" "+c.Value+" "+c.Source)
	}
	want := []string{
		"duid 00:01:00:01:2c:3d:4e:5f:52:54:00:12:34:56 /etc/dhcpcd.duid",
		"duid 00:04:11:22:33:44:55:66:77:88 /var/lib/dhcpcd/duid",
		"duid 00:04:aa:bb:cc:dd:ee:ff:00:11 /var/db/dhcpcd/duid",
	}
	if !slices.Equal(got, want) {
		t.Errorf("DHCP clients\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestReadOtherMachineIDs: the machine IDs a guest holds besides
// /etc/machine-id are hashed like it, once each; one equal to it, or a
// D-Bus symlink to it, adds nothing; two clones sharing only the D-Bus
// copy, or a pin on the kernel command line, collide on machine-id.
func TestReadOtherMachineIDs(t *testing.T) {
	const dbus = "0123456789abcdef0123456789abcdef"
	const pinned = "fedcba98-7654-3210-fedc-ba9876543210"
	files := map[string]string{
		"/etc/machine-id":                            testMachineID + "\n",
		"/var/lib/dbus/machine-id":                   dbus + "\n",
		"/etc/kernel/cmdline":                        "root=/dev/vda1 systemd.machine_id=" + pinned + " quiet systemd.machine_id=" + testMachineID + "\n",
		"/etc/credstore/system.machine_id":           dbus,
		"/etc/credstore.encrypted/system.machine_id": "\x00sealed-bytes",
	}
	id := Read(openRoot(t, testenv.WriteTree(t, files)), false)
	hash := func(s string) string {
		h, ok := MachineIDHash(strings.ReplaceAll(s, "-", ""))
		if !ok {
			t.Fatalf("%s is no ID", s)
		}
		return h
	}
	want := []MachineIDCopy{
		{Hash: hash(dbus), Source: "/var/lib/dbus/machine-id"},
		{Hash: hash(pinned), Source: "/etc/kernel/cmdline"},
	}
	var got []MachineIDCopy
	for _, c := range id.OtherMachineIDs {
		if c.Source != "/etc/credstore.encrypted/system.machine_id" {
			got = append(got, c)
		} else if len(c.Hash) != 32 {
			t.Errorf("the encrypted credential's hash %q", c.Hash)
		}
	}
	if !slices.Equal(got, want) || len(id.OtherMachineIDs) != 3 {
		t.Errorf("other machine IDs %+v, want %+v and the encrypted credential", id.OtherMachineIDs, want)
	}
	b, _ := json.Marshal(id)
	for _, raw := range []string{dbus, pinned, testMachineID, "sealed-bytes"} {
		if strings.Contains(string(b), raw) {
			t.Errorf("the identity's JSON carries %q: %s", raw, b)
		}
	}

	// A D-Bus symlink is /etc/machine-id itself.
	dir := testenv.WriteTree(t, map[string]string{"/etc/machine-id": testMachineID + "\n"})
	if err := os.MkdirAll(filepath.Join(dir, "var/lib/dbus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/machine-id", filepath.Join(dir, "var/lib/dbus/machine-id")); err != nil {
		t.Fatal(err)
	}
	if id := Read(openRoot(t, dir), false); id.OtherMachineIDs != nil {
		t.Errorf("a D-Bus symlink counted: %+v", id.OtherMachineIDs)
	}

	// Clones with their own /etc/machine-id that keep the D-Bus copy.
	a := Identity{MachineIDHash: hash(testMachineID), OtherMachineIDs: want[:1]}
	c := Identity{MachineIDHash: hash(pinned), OtherMachineIDs: want[:1]}
	cols := Collisions([]Member{{Name: "a", ID: a}, {Name: "b", ID: c}})
	if len(cols) != 1 || cols[0].Item != ItemMachineID || cols[0].Value != hash(dbus) {
		t.Errorf("collisions %+v, want machine-id on the D-Bus copy", cols)
	}
}

// TestReadInstanceFromState: without cloud-init's instance-id cache, the
// instance link names the instance, else the one instance directory.
func TestReadInstanceFromState(t *testing.T) {
	dir := testenv.WriteTree(t, map[string]string{"/var/lib/cloud/instances/i-1/datasource": "x", "/var/lib/cloud/instances/i-2/datasource": "x"})
	if id := Read(openRoot(t, dir), false); id.InstanceID != "" {
		t.Errorf("two instances, no link: instance-id %q", id.InstanceID)
	}
	if err := os.Symlink("/var/lib/cloud/instances/i-2", filepath.Join(dir, "var/lib/cloud/instance")); err != nil {
		t.Fatal(err)
	}
	if id := Read(openRoot(t, dir), false); id.InstanceID != "i-2" {
		t.Errorf("linked to i-2: instance-id %q", id.InstanceID)
	}
	one := testenv.WriteTree(t, map[string]string{"/var/lib/cloud/instances/iid-abc/datasource": "x", "/var/lib/cloud/instances/notes.json": "{}"})
	if id := Read(openRoot(t, one), false); id.InstanceID != "iid-abc" {
		t.Errorf("one instance directory: instance-id %q", id.InstanceID)
	}
	cached := testenv.WriteTree(t, map[string]string{"/var/lib/cloud/instances/old/datasource": "x", "/var/lib/cloud/data/instance-id": "new\n"})
	if id := Read(openRoot(t, cached), false); id.InstanceID != "new" {
		t.Errorf("the cache is the current instance: instance-id %q", id.InstanceID)
	}
}

// TestReadDhcpcdLeases: dhcpcd's saved replies give the identifier the
// client presented; two clones that keep one collide on it; a file that
// is no DHCP message is noted as unread.
func TestReadDhcpcdLeases(t *testing.T) {
	ack := make([]byte, 236)
	ack[0], ack[1], ack[2] = 2, 1, 6
	ack = append(ack, 99, 130, 83, 99, 53, 1, 5, 61, 7, 1, 0x52, 0x54, 0, 0x12, 0x34, 0x56, 255)
	reply6 := []byte{7, 1, 2, 3, 0, 1, 0, 4, 0, 4, 0xab, 0xcd}
	id := Read(openRoot(t, testenv.WriteTree(t, map[string]string{
		"/var/lib/dhcpcd/eth0.lease":  string(ack),
		"/var/lib/dhcpcd/eth0.lease6": string(reply6),
		"/var/lib/dhcpcd/eth1.lease":  "garbage",
		"/var/lib/dhcpcd/duid":        "00:04:ab:cd\n",
	})), false)
	want := []DHCPClient{
		{Kind: KindDUID, Value: "00:04:ab:cd", Source: "/var/lib/dhcpcd/duid"},
		{Kind: KindClientID, Value: "01:52:54:00:12:34:56", Source: "/var/lib/dhcpcd/eth0.lease"},
	}
	if !slices.Equal(id.DHCPClients, want) {
		t.Errorf("DHCP clients %+v, want %+v (the .lease6 DUID is the duid file's)", id.DHCPClients, want)
	}
	if len(id.Unread) != 1 || !strings.HasPrefix(id.Unread[0], "dhcp-client-id: /var/lib/dhcpcd/eth1.lease: not a dhcpcd lease: ") {
		t.Errorf("unread %q", id.Unread)
	}
}

// TestReadDhcpcdCapture reads a root holding the files the real dhcpcd
// 9.4.1 wrote (internal/parse/dhcplease/testdata/dhcpcd): the DUID, once,
// as the .lease6 presents the duid file's; the DHCPv4 lease adds nothing,
// as dnsmasq echoed no client ID into it.
func TestReadDhcpcdCapture(t *testing.T) {
	const capture = "../../../parse/dhcplease/testdata/dhcpcd"
	files := map[string]string{}
	for _, n := range []string{"duid", "eth0.lease", "eth0.lease6"} {
		b, err := os.ReadFile(filepath.Join(capture, n))
		if err != nil {
			t.Fatal(err)
		}
		files["/var/lib/dhcpcd/"+n] = string(b)
	}
	root := openRoot(t, testenv.WriteTree(t, files))
	id := Read(root, false)
	duid := strings.TrimSpace(files["/var/lib/dhcpcd/duid"])
	if want := []DHCPClient{{Kind: KindDUID, Value: duid, Source: "/var/lib/dhcpcd/duid"}}; !slices.Equal(id.DHCPClients, want) {
		t.Errorf("DHCP clients %+v, want %+v", id.DHCPClients, want)
	}
	if id.Unread != nil {
		t.Errorf("unread %q", id.Unread)
	}
	// What a template must not hold: each of the three, by the names
	// dhcpcd gave them.
	want := []string{
		"/var/lib/dhcpcd/duid (dhcpcd's DUID)",
		"/var/lib/dhcpcd/eth0.lease (a dhcpcd lease)",
		"/var/lib/dhcpcd/eth0.lease6 (a dhcpcd lease)",
	}
	if got := identity.ReadDHCPState(root); !slices.Equal(got, want) {
		t.Errorf("DHCP state %q, want %q", got, want)
	}
}

// TestReadWickedLeases: a wicked DHCPv4 lease gives its client-id, a
// DHCPv6 lease its DUID; other files of /var/lib/wicked are not leases.
func TestReadWickedLeases(t *testing.T) {
	id := Read(openRoot(t, testenv.WriteTree(t, map[string]string{
		"/var/lib/wicked/lease-eth0-dhcp-ipv4.xml": "<lease>\n  <family>ipv4</family>\n  <ipv4:dhcp>\n    <client-id>ff:00:12:34:56:00:01</client-id>\n  </ipv4:dhcp>\n</lease>\n",
		"/var/lib/wicked/lease-eth0-dhcp-ipv6.xml": "<lease><ipv6:dhcp><client-id>00:04:ab:cd:ef</client-id></ipv6:dhcp></lease>",
		"/var/lib/wicked/lease-eth0-dhcp-ipv4.bak": "<client-id>01:02</client-id>",
	})), false)
	want := []DHCPClient{
		{Kind: KindClientID, Value: "ff:00:12:34:56:00:01", Source: "/var/lib/wicked/lease-eth0-dhcp-ipv4.xml"},
		{Kind: KindDUID, Value: "00:04:ab:cd:ef", Source: "/var/lib/wicked/lease-eth0-dhcp-ipv6.xml"},
	}
	if !slices.Equal(id.DHCPClients, want) {
		t.Errorf("DHCP clients %+v, want %+v", id.DHCPClients, want)
	}
}
