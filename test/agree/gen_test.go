package agree

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

// dim is one dimension of the generated roots and its values, each a
// short name that builds part of the root (see specNodes).
type dim struct {
	name   string
	values []string
}

// dims are the identity facts both binaries read. Values that only make
// sense together (a regenerator without sshd) are still combined: what
// either binary does with them is part of what must agree.
var dims = []dim{
	{"mid", []string{"absent", "empty", "uninitialized-nl", "uninitialized", "valid", "valid-upper", "zero", "junk",
		"link-missing", "link-valid", "link-empty"}},
	{"mid-mode", []string{"0444", "0644", "0666"}},
	{"dbus", []string{"none", "link", "valid", "other", "empty", "junk"}},
	{"systemd", []string{"yes", "yes", "no"}},
	{"mid-leak", []string{"none", "none", "credstore", "cmdline"}},
	{"fstab", []string{"none", "defaults", "ro", "rw", "ro,rw", "rw,ro", "two-lines"}},
	{"cmdline", []string{"none", "kernel-rw", "kernel-ro", "kernel-neither", "bls-rw", "bls-ro", "bls-two-lines",
		"bls-split", "grub-rw", "grub-ro", "kernel-rw+bls-ro", "grub-rw+bls-ro"}},
	{"sshd", []string{"yes", "yes", "no"}},
	{"keys", []string{"none", "none", "pair", "private-only", "broken"}},
	{"regen", []string{"none", "cloud-init", "sshd-keygen@", "ssh.service-keygen", "sealprep-unit", "sealprep-unit-unlinked", "masked"}},
	{"ssh-keygen", []string{"yes", "no"}},
	{"hostname", []string{"absent", "empty", "name", "localhost", "localhost.localdomain", "blank-line"}},
	{"hosts", []string{"plain", "names-template"}},
	{"cloud-init", []string{"none", "installed", "instance", "two-instances", "seed-only", "disabled+instance"}},
	{"instance-age", []string{"older", "newer"}},
	{"userdata-hostname", []string{"no", "yes"}},
	{"record", []string{"none", "none", "match", "other", "invalid"}},
	{"dhcp", []string{"none", "netplan-dhcp", "netplan-mac", "networkd-dhcp", "networkd-mac", "nm-duid", "nm-mac"}},
	{"leases", []string{"none", "dhclient", "nm", "dhcpcd-etc-duid", "dhcpcd-duid", "dhcpcd-state"}},
	{"mac-pin", []string{"none", "none", "networkd-mac", "link-mac", "nm-mac", "ifcfg-hwaddr"}},
}

// spec is one generated root: a value for every dimension, in dims order.
type spec []string

func (s spec) get(name string) string {
	for i, d := range dims {
		if d.name == name {
			return s[i]
		}
	}
	panic("no dimension " + name)
}

func (s spec) String() string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.name + "=" + s[i]
	}
	return strings.Join(parts, " ")
}

// genSpecs returns n specs, the same on every run: first enough rounds
// that every value of every dimension occurs (value i of each dimension
// in round i), then seeded random combinations.
func genSpecs(n int) []spec {
	rng := rand.New(rand.NewPCG(22, 7))
	widest := 0
	for _, d := range dims {
		widest = max(widest, len(d.values))
	}
	var out []spec
	for i := 0; len(out) < n; i++ {
		s := make(spec, len(dims))
		for j, d := range dims {
			if i < widest {
				s[j] = d.values[(i+j)%len(d.values)]
			} else {
				s[j] = d.values[rng.IntN(len(d.values))]
			}
		}
		out = append(out, s)
	}
	return out
}

// osBase is what every root has: an OS root to sealprep's preflight.
func osBase() []node {
	return []node{
		file("/usr/lib/os-release", "ID=debian\nVERSION_ID=12\n"),
		link("/etc/os-release", "../usr/lib/os-release"),
		file("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"),
		file("/etc/group", "root:x:0:\n"),
		dir("/etc/systemd/system"),
		dir("/var/lib"),
	}
}

// specNodes builds the root s describes.
func specNodes(s spec) []node {
	n := osBase()
	n = append(n, machineIDNodes(s)...)
	n = append(n, bootNodes(s)...)
	n = append(n, sshNodes(s)...)
	n = append(n, hostnameNodes(s)...)
	n = append(n, cloudInitNodes(s)...)
	n = append(n, networkNodes(s)...)
	switch s.get("record") {
	case "match":
		n = append(n, file("/var/lib/sealprep/template.json", templateRecord(machineID)))
	case "other":
		n = append(n, file("/var/lib/sealprep/template.json", templateRecord(otherMachineID)))
	case "invalid":
		n = append(n, file("/var/lib/sealprep/template.json", "{\"schema\": 1, \"sealed_at\": \"yesterday\"}\n"))
	}
	return n
}

func machineIDNodes(s spec) []node {
	var n []node
	if s.get("systemd") == "yes" {
		n = append(n, file("/usr/lib/systemd/systemd", "ELF"),
			file("/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so", "ELF"))
	}
	var mode os.FileMode
	fmt.Sscanf(s.get("mid-mode"), "%o", &mode)
	const etc = "/etc/machine-id"
	content := map[string]string{"empty": "", "uninitialized-nl": "uninitialized\n", "uninitialized": "uninitialized",
		"valid": machineID + "\n", "valid-upper": strings.ToUpper(machineID), "zero": strings.Repeat("0", 32) + "\n",
		"junk": "not a machine id\n"}
	switch v := s.get("mid"); v {
	case "absent":
	case "link-missing":
		n = append(n, link(etc, "/run/machine-id"))
	case "link-valid":
		n = append(n, fileMode("/etc/machine-id.real", machineID+"\n", mode), link(etc, "machine-id.real"))
	case "link-empty":
		n = append(n, fileMode("/etc/machine-id.real", "", mode), link(etc, "machine-id.real"))
	default:
		n = append(n, fileMode(etc, content[v], mode))
	}
	const dbus = "/var/lib/dbus/machine-id"
	switch s.get("dbus") {
	case "link":
		n = append(n, link(dbus, "/etc/machine-id"))
	case "valid":
		n = append(n, file(dbus, machineID+"\n"))
	case "other":
		n = append(n, file(dbus, otherMachineID+"\n"))
	case "empty":
		n = append(n, file(dbus, ""))
	case "junk":
		n = append(n, file(dbus, "junk\n"))
	}
	if s.get("mid-leak") == "credstore" {
		n = append(n, fileMode("/etc/credstore/system.machine_id", machineID+"\n", 0o600))
	}
	return n
}

func bootNodes(s spec) []node {
	var n []node
	fstab := map[string]string{
		"defaults":  "UUID=0b2c-4d6e / ext4 defaults 0 1\n",
		"ro":        "UUID=0b2c-4d6e / ext4 ro,noatime 0 1\n",
		"rw":        "UUID=0b2c-4d6e / ext4 rw,noatime 0 1\n",
		"ro,rw":     "UUID=0b2c-4d6e / ext4 ro,rw 0 1\n",
		"rw,ro":     "UUID=0b2c-4d6e / ext4 rw,ro 0 1\n",
		"two-lines": "UUID=0b2c-4d6e / ext4 ro 0 1\nUUID=0b2c-4d6e / ext4 rw 0 1\n",
	}
	if b, ok := fstab[s.get("fstab")]; ok {
		n = append(n, file("/etc/fstab", b))
	}
	extra := ""
	if s.get("mid-leak") == "cmdline" {
		extra = " systemd.machine_id=" + machineID
	}
	kernel := func(args string) node { return file("/etc/kernel/cmdline", args+extra+"\n") }
	bls := func(opts ...string) node {
		b := "title Debian GNU/Linux\nversion 6.1.0\nlinux /vmlinuz-6.1.0\ninitrd /initrd.img-6.1.0\n"
		for _, o := range opts {
			b += "options " + o + "\n"
		}
		return file("/boot/loader/entries/debian-6.1.0.conf", b)
	}
	grub := func(args string) node {
		return file("/boot/grub/grub.cfg", "menuentry 'Debian' {\n\tlinux /vmlinuz-6.1.0 "+args+extra+"\n\tinitrd /initrd.img-6.1.0\n}\n")
	}
	const root = "root=UUID=0b2c-4d6e"
	switch s.get("cmdline") {
	case "kernel-rw":
		n = append(n, kernel(root+" rw quiet"))
	case "kernel-ro":
		n = append(n, kernel(root+" ro quiet"))
	case "kernel-neither":
		n = append(n, kernel(root+" quiet"))
	case "bls-rw":
		n = append(n, bls(root+" rw"+extra))
	case "bls-ro":
		n = append(n, bls(root+" ro"+extra))
	case "bls-two-lines":
		n = append(n, bls(root+" ro"+extra, "rw"))
	case "bls-split":
		n = append(n, bls(root+extra, "rw quiet"))
	case "grub-rw":
		n = append(n, grub(root+" rw"))
	case "grub-ro":
		n = append(n, grub(root+" ro"))
	case "kernel-rw+bls-ro":
		n = append(n, kernel(root+" rw"), bls(root+" ro"))
	case "grub-rw+bls-ro":
		n = append(n, grub(root+" rw"), bls(root+" ro"))
	}
	return n
}

func sshNodes(s spec) []node {
	var n []node
	if s.get("sshd") == "yes" {
		n = append(n, file("/usr/sbin/sshd", "ELF"), file("/etc/ssh/sshd_config", "Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"),
			file("/usr/lib/systemd/system/ssh.service", "[Service]\nExecStart=/usr/sbin/sshd -D\n[Install]\nWantedBy=multi-user.target\n"),
			link("/etc/systemd/system/multi-user.target.wants/ssh.service", "/usr/lib/systemd/system/ssh.service"))
	}
	if s.get("ssh-keygen") == "yes" {
		n = append(n, file("/usr/bin/ssh-keygen", "ELF"))
	}
	const key = "/etc/ssh/ssh_host_ed25519_key"
	k := testKey()
	switch s.get("keys") {
	case "pair":
		n = append(n, fileMode(key, k.private, 0o600), file(key+".pub", k.public))
	case "private-only":
		n = append(n, fileMode(key, k.private, 0o600))
	case "broken":
		n = append(n, fileMode(key, "-----BEGIN OPENSSH PRIVATE KEY-----\ntruncated\n", 0o600), file(key+".pub", k.public))
	}
	const units = "/usr/lib/systemd/system/"
	switch s.get("regen") {
	case "cloud-init":
		// Only a regenerator when cloud-init is installed (cloudInitNodes).
	case "sshd-keygen@":
		n = append(n, file(units+"sshd-keygen@.service", "[Service]\nExecStart=/usr/libexec/openssh/sshd-keygen %i\n"))
	case "ssh.service-keygen":
		n = append(n, file(units+"ssh.service", "[Service]\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStart=/usr/sbin/sshd -D\n[Install]\nWantedBy=multi-user.target\n"))
	case "sealprep-unit", "sealprep-unit-unlinked":
		n = append(n, file("/etc/systemd/system/sealprep-ssh-keygen.service", sealprepKeygenUnit))
		if s.get("regen") == "sealprep-unit" {
			n = append(n, link("/etc/systemd/system/multi-user.target.wants/sealprep-ssh-keygen.service", "/etc/systemd/system/sealprep-ssh-keygen.service"))
		}
	case "masked":
		n = append(n, file(units+"sshd-keygen@.service", "[Service]\nExecStart=/usr/libexec/openssh/sshd-keygen %i\n"),
			link("/etc/systemd/system/sshd-keygen@.service", "/dev/null"))
	}
	return n
}

// sealprepKeygenUnit is the unit sealprep installs, byte for byte (it
// counts as sealprep's regenerator only then).
const sealprepKeygenUnit = `# Installed by sealprep: this template's SSH host keys were removed and
# nothing else on it regenerates them. ssh-keygen -A creates only the
# missing keys, so this is a no-op once they exist.
[Unit]
Description=Generate missing SSH host keys (installed by sealprep)
Before=ssh.service sshd.service

[Service]
Type=oneshot
ExecStart=/usr/bin/ssh-keygen -A

[Install]
WantedBy=multi-user.target
`

func hostnameNodes(s spec) []node {
	var n []node
	switch v := s.get("hostname"); v {
	case "empty":
		n = append(n, file("/etc/hostname", ""))
	case "name":
		n = append(n, file("/etc/hostname", "template-01\n"))
	case "localhost", "localhost.localdomain":
		n = append(n, file("/etc/hostname", v+"\n"))
	case "blank-line":
		n = append(n, file("/etc/hostname", "\n"))
	}
	hosts := "127.0.0.1 localhost\n::1 localhost ip6-localhost\n"
	if s.get("hosts") == "names-template" {
		hosts += "127.0.1.1 template-01.example.org template-01\n"
	}
	return append(n, file("/etc/hosts", hosts))
}

func cloudInitNodes(s spec) []node {
	ci := s.get("cloud-init")
	if ci == "none" {
		return nil
	}
	cfg := "users: [default]\ncloud_init_modules:\n - seed_random\n - users-groups\ncloud_config_modules:\n - runcmd\n"
	if s.get("regen") == "cloud-init" {
		cfg = "users: [default]\ncloud_init_modules:\n - seed_random\n - ssh\n - users-groups\ncloud_config_modules:\n - runcmd\nssh_genkeytypes: [ed25519]\n"
	}
	n := []node{file("/usr/bin/cloud-init", "#!/usr/bin/python3\n"), file("/etc/cloud/cloud.cfg", cfg)}
	age := 24 * time.Hour // the instance first ran a day ago, before machine-id was written
	if s.get("instance-age") == "newer" {
		age = -time.Hour // after: machine-id predates the instance
	}
	instance := func(id string, age time.Duration) []node {
		d := "/var/lib/cloud/instances/" + id
		out := []node{
			aged(file(d+"/sem/config_ssh", ""), age), aged(file(d+"/sem/config_users_groups", ""), age),
			file(d+"/datasource", "DataSourceNoCloud: DataSourceNoCloud [seed=/dev/sr0]\n"),
			file(d+"/user-data.txt", "#cloud-config\n"),
			file(d+"/cloud-config.txt", "#cloud-config\n"),
			file(d+"/instance-data.json", fmt.Sprintf("{\"v1\": {\"instance_id\": %q, \"local_hostname\": \"vm-%s\"}}\n", id, id[len(id)-4:])),
		}
		if s.get("userdata-hostname") == "yes" {
			out = append(out, file(d+"/cloud-config.txt", "#cloud-config\nhostname: template-01\n"))
		}
		return out
	}
	switch ci {
	case "instance", "disabled+instance", "two-instances":
		n = append(n, instance(instanceID, age)...)
		n = append(n, link("/var/lib/cloud/instance", "/var/lib/cloud/instances/"+instanceID),
			file("/var/lib/cloud/data/instance-id", instanceID+"\n"),
			file("/var/lib/cloud/data/previous-instance-id", instanceID+"\n"),
			file("/run/cloud-init/instance-data.json", fmt.Sprintf("{\"v1\": {\"instance_id\": %q}}\n", instanceID)))
		if ci == "two-instances" {
			n = append(n, instance(oldInstanceID, age+48*time.Hour)...)
			n = append(n, file("/var/lib/cloud/data/previous-instance-id", oldInstanceID+"\n"))
		}
		if ci == "disabled+instance" {
			n = append(n, file("/etc/cloud/cloud-init.disabled", ""))
		}
	case "seed-only":
		n = append(n, file("/var/lib/cloud/seed/nocloud/meta-data", "instance-id: "+instanceID+"\n"),
			file("/var/lib/cloud/seed/nocloud/user-data", "#cloud-config\n"))
	}
	return n
}

func networkNodes(s spec) []node {
	var n []node
	switch s.get("dhcp") {
	case "netplan-dhcp":
		n = append(n, fileMode("/etc/netplan/01-netcfg.yaml", "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n    eth0:\n      dhcp4: true\n", 0o600))
	case "netplan-mac":
		n = append(n, fileMode("/etc/netplan/01-netcfg.yaml", "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n    eth0:\n      dhcp4: true\n      dhcp-identifier: mac\n", 0o600))
	case "networkd-dhcp":
		n = append(n, file("/etc/systemd/network/20-eth0.network", "[Match]\nName=eth0\n\n[Network]\nDHCP=yes\n"))
	case "networkd-mac":
		n = append(n, file("/etc/systemd/network/20-eth0.network", "[Match]\nName=eth0\n\n[Network]\nDHCP=ipv4\n\n[DHCPv4]\nClientIdentifier=mac\n"))
	case "nm-duid", "nm-mac":
		id := strings.TrimPrefix(s.get("dhcp"), "nm-")
		n = append(n, fileMode("/etc/NetworkManager/system-connections/eth0.nmconnection",
			"[connection]\nid=eth0\ntype=ethernet\ninterface-name=eth0\n\n[ipv4]\nmethod=auto\ndhcp-client-id="+id+"\n", 0o600))
	}
	switch s.get("leases") {
	case "dhclient":
		n = append(n, file("/var/lib/dhcp/dhclient.eth0.leases", "lease {\n  interface \"eth0\";\n  fixed-address 192.0.2.10;\n}\n"))
	case "nm":
		n = append(n, file("/var/lib/NetworkManager/internal-eth0.lease", "ADDRESS=192.0.2.10\n"))
	default:
		n = append(n, dhcpcdNodes(s.get("leases"))...)
	}
	return append(n, macPinNodes(s.get("mac-pin"))...)
}

// dhcpcdNodes is dhcpcd's state (dhcpcd(8) FILES): dhcpcd 6's
// /etc/dhcpcd.duid, dhcpcd 7's DUID in its DBDIR, or its secret and
// leases.
func dhcpcdNodes(v string) []node {
	switch v {
	case "dhcpcd-etc-duid":
		return []node{file("/etc/dhcpcd.duid", "00:01:00:01:2c:3d:4e:5f:52:54:00:12:34:56\n")}
	case "dhcpcd-duid":
		return []node{file("/var/lib/dhcpcd/duid", "00:04:11:22:33:44:55:66:77:88\n")}
	case "dhcpcd-state":
		return []node{fileMode("/var/lib/dhcpcd/secret", "SECRET", 0o600), file("/var/lib/dhcpcd/eth0.lease", "LEASE"),
			file("/var/lib/dhcpcd/eth0.lease6", "LEASE6")}
	}
	return nil
}

// templateMAC is the template NIC's MAC the pins name.
const templateMAC = "52:54:00:12:34:56"

// macPinNodes is configuration pinned to the template's NIC by MAC, in
// the forms net-mac-pins edits: a networkd .network and a .link that also
// match by name, a NetworkManager keyfile and an ifcfg file.
func macPinNodes(v string) []node {
	switch v {
	case "networkd-mac":
		return []node{file("/etc/systemd/network/30-lan.network", "[Match]\nName=eth0\nMACAddress="+templateMAC+"\n\n[Network]\nDHCP=ipv4\n\n[DHCPv4]\nClientIdentifier=mac\n")}
	case "link-mac":
		return []node{file("/etc/systemd/network/10-lan.link", "[Match]\nOriginalName=eth*\nPermanentMACAddress="+templateMAC+"\n\n[Link]\nName=lan0\n")}
	case "nm-mac":
		return []node{fileMode("/etc/NetworkManager/system-connections/lan.nmconnection",
			"[connection]\nid=lan\ntype=ethernet\ninterface-name=eth0\n\n[ethernet]\nmac-address="+templateMAC+"\n\n[ipv4]\nmethod=auto\n", 0o600)}
	case "ifcfg-hwaddr":
		return []node{file("/etc/sysconfig/network-scripts/ifcfg-eth0", "DEVICE=eth0\nBOOTPROTO=dhcp\nHWADDR="+templateMAC+"\nONBOOT=yes\n")}
	}
	return nil
}
