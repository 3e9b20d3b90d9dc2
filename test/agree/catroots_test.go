package agree

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

// placeRoot is one generated root for one place of one catalogue item:
// a template but for the item, held at that place in the form its stack
// writes it (variant names the form when a place has several).
type placeRoot struct {
	item    catalogue.Item
	place   catalogue.Place
	variant string
	nodes   []node
	// refused: sealprep refuses to edit this form (an administrator's
	// netplan MAC match), so apply leaves it NOT-SEALED with a refusal.
	refused bool
}

func (r placeRoot) name() string {
	n := r.item.Name + path.Clean(r.place.Path)
	if r.variant != "" {
		n += "/" + r.variant
	}
	return n
}

// form is one way a place holds an item: the file's name in a
// directory place ("" for a file place), its content, and whatever else
// the stack needs to be on the root.
type form struct {
	variant string
	name    string
	data    string
	mode    uint32
	extra   []node
	refused bool
}

// catalogueRoots lists a root for every form of every place of every
// catalogue item.
func catalogueRoots() []placeRoot {
	var out []placeRoot
	for _, it := range catalogue.Items {
		for _, pl := range it.Places {
			for _, f := range formsOf(it, pl) {
				p := pl.Path
				if pl.Dir {
					p = path.Join(p, f.name)
				}
				mode := f.mode
				if mode == 0 {
					mode = 0o644
				}
				n := append(baseFor(pl.Stack), f.extra...)
				if f.data != "\x00link" {
					n = append(n, fileMode(p, f.data, os.FileMode(mode)))
				}
				out = append(out, placeRoot{item: it, place: pl, variant: f.variant, nodes: n, refused: f.refused})
			}
		}
	}
	return out
}

// baseFor is templateBase on the distribution family a stack belongs to:
// ifcfg and Red Hat enrolment on a Red Hat root, wicked and SUSE's files
// on a SUSE one, everything else on Debian.
func baseFor(stack string) []node {
	n := templateBase()
	switch stack {
	case catalogue.StackRedHat, catalogue.StackFreeIPA, catalogue.StackIfcfg:
		n = append(n, file("/usr/lib/os-release", "ID=rhel\nID_LIKE=\"fedora\"\nVERSION_ID=9.4\n"))
	case catalogue.StackSUSE, catalogue.StackWicked:
		n = append(n, file("/usr/lib/os-release", "ID=sles\nID_LIKE=\"suse\"\nVERSION_ID=15.6\n"))
	}
	return n
}

// formsOf is how pl holds it, in the stack's own format, so that the
// item's reader recognises it.
func formsOf(it catalogue.Item, pl catalogue.Place) []form {
	switch it.Name {
	case catalogue.MachineID:
		return []form{{data: machineID + "\n", mode: 0o444,
			extra: []node{file("/var/lib/sealprep/template.json", templateRecord(machineID))}}}
	case catalogue.DBusMachineID:
		return []form{{data: machineID + "\n"}}
	case catalogue.MachineIDCmdline:
		return []form{cmdlineForm(pl)}
	case catalogue.MachineIDCredential:
		data := machineID + "\n"
		if strings.Contains(pl.Path, "encrypted") {
			data = encryptedCredential()
		}
		return []form{{data: data, mode: 0o400}}
	case catalogue.SSHHostKeys:
		return []form{hostKeyForm(pl.Path)}
	case catalogue.RandomSeed, catalogue.CredentialSecret, catalogue.NMSecretKey:
		return []form{{name: "random-seed", data: randomBytes(512), mode: 0o600}}
	case catalogue.Hostname:
		return []form{{data: "template-01\n"}}
	case catalogue.CloudInitInstance:
		return []form{cloudInitForm(pl)}
	case catalogue.MACPins, catalogue.UdevPersistentNet:
		return macPinForms(pl)
	}
	return []form{dhcpForm(it, pl)}
}

// cmdlineForm is a machine ID on one kernel command-line file, in the
// syntax of that file.
func cmdlineForm(pl catalogue.Place) form {
	const args = "root=UUID=0b2c-4d6e ro quiet systemd.machine_id=" + machineID
	switch {
	case pl.Dir && strings.HasSuffix(pl.Path, "entries"):
		return form{name: "debian-6.1.0.conf", data: "title Debian GNU/Linux 12\nversion 6.1.0-28-amd64\nlinux /vmlinuz-6.1.0-28-amd64\ninitrd /initrd.img-6.1.0-28-amd64\noptions " + args + "\n"}
	case pl.Dir:
		return form{name: "50-cloudimg-settings.cfg", data: "GRUB_CMDLINE_LINUX_DEFAULT=\"console=tty1 console=ttyS0 systemd.machine_id=" + machineID + "\"\nGRUB_TIMEOUT=0\n"}
	case strings.HasSuffix(pl.Path, "grub.cfg"):
		return form{data: "set default=0\nmenuentry 'Debian GNU/Linux' {\n\tlinux /vmlinuz-6.1.0-28-amd64 " + args + "\n\tinitrd /initrd.img-6.1.0-28-amd64\n}\n"}
	case strings.HasSuffix(pl.Path, "grubenv"):
		env := "# GRUB Environment Block\nsaved_entry=0\nkernelopts=" + args + "\n"
		return form{data: env + strings.Repeat("#", 1024-len(env))}
	case strings.HasSuffix(pl.Path, "/grub"):
		return form{data: "GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\nGRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\nGRUB_CMDLINE_LINUX=\"console=ttyS0 systemd.machine_id=" + machineID + "\"\n"}
	}
	return form{data: args + "\n"}
}

// encryptedCredential is what systemd-creds encrypt writes: base64 of a
// binary header and ciphertext (its content is opaque to both tools).
func encryptedCredential() string {
	return "k6iUCUh0RJCQyvL8k8q1UyAAAAABAAAADAAAABAAAAC5RWNPfSLoTwF9FFMAAAAA" + hex.EncodeToString([]byte(machineID))[:40] + "\n"
}

// sshServer is an sshd with systemd, so that sealprep can install its
// regenerator when it removes the keys.
func sshServer() []node {
	return []node{file("/usr/sbin/sshd", "ELF"), file("/usr/bin/ssh-keygen", "ELF"),
		file("/etc/ssh/sshd_config", "Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"),
		file("/usr/lib/systemd/system/ssh.service", "[Service]\nExecStart=/usr/sbin/sshd -D\n[Install]\nWantedBy=multi-user.target\n"),
		link("/etc/systemd/system/multi-user.target.wants/ssh.service", "/usr/lib/systemd/system/ssh.service")}
}

// hostKeyForm is a host key of the type the default path names, with
// its .pub.
func hostKeyForm(p string) form {
	k := hostKeyOfType(path.Base(p))
	return form{data: k.private, mode: 0o600, extra: append(sshServer(), file(p+".pub", k.public))}
}

// hostKeys are one key per type, made once per run (every clone of one
// root copies the same files, so they need not be the same across runs).
var hostKeys = sync.OnceValue(func() map[string]hostKey {
	out := map[string]hostKey{"ssh_host_ed25519_key": testKey()}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	for name, priv := range map[string]any{"ssh_host_rsa_key": rk, "ssh_host_ecdsa_key": ek} {
		blk, err := ssh.MarshalPrivateKey(priv, "root@template")
		if err != nil {
			panic(err)
		}
		signer, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			panic(err)
		}
		out[name] = hostKey{private: string(pem.EncodeToMemory(blk)), public: string(ssh.MarshalAuthorizedKey(signer.PublicKey()))}
	}
	return out
})

func hostKeyOfType(name string) hostKey { return hostKeys()[name] }

// randomBytes is n bytes of random data, as a seed or key file holds.
func randomBytes(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return string(b)
}

// cloudInitForm is cloud-init's instance state at one of its places,
// with cloud-init installed: the instance link (and the directory it
// names), the instance-id caches, or an instance's directory.
func cloudInitForm(pl catalogue.Place) form {
	f := form{extra: []node{file("/usr/bin/cloud-init", "#!/usr/bin/python3\n"), file("/etc/cloud/cloud.cfg", "users: [default]\ncloud_init_modules:\n - seed_random\n - users-groups\n")}}
	inst := path.Join(path.Dir(pl.Path), "instances", instanceID)
	switch {
	case pl.Dir:
		inst = path.Join(pl.Path, instanceID)
		f.name, f.data = instanceID+".json", "{}\n"
	case path.Base(pl.Path) == "instance":
		f.data = "\x00link"
		f.extra = append(f.extra, link(pl.Path, inst))
	default:
		f.data = instanceID + "\n"
		return f
	}
	f.extra = append(f.extra, file(inst+"/datasource", "DataSourceNoCloud: DataSourceNoCloud [seed=/dev/sr0]\n"),
		file(inst+"/instance-data.json", fmt.Sprintf("{\"v1\": {\"instance_id\": %q}}\n", instanceID)),
		file(inst+"/sem/config_users_groups", ""))
	return f
}

// macPinForms are configuration bound to the template's MAC in each
// stack's syntax: a match on it (netplan, networkd, NetworkManager
// mac-address, ifcfg HWADDR, udev's rules) or the MAC set on the NIC
// (NetworkManager cloned-mac-address, ifcfg MACADDR, ENI hwaddress).
func macPinForms(pl catalogue.Place) []form {
	switch pl.Stack {
	case catalogue.StackUdev:
		return []form{{data: "# This file was automatically generated by the /lib/udev/write_net_rules\n# program, run by the persistent-net-generator.rules rules file.\n\n# PCI device 0x1af4:0x1000 (virtio-pci)\nSUBSYSTEM==\"net\", ACTION==\"add\", DRIVERS==\"?*\", ATTR{address}==\"" + templateMAC + "\", ATTR{dev_id}==\"0x0\", ATTR{type}==\"1\", KERNEL==\"eth*\", NAME=\"eth0\"\n"}}
	case catalogue.StackNetplan:
		return []form{{name: "01-lan.yaml", mode: 0o600, refused: true, data: "network:\n  version: 2\n  ethernets:\n    lan:\n      match:\n        macaddress: \"" + templateMAC + "\"\n      set-name: lan\n      dhcp4: true\n"}}
	case catalogue.StackNetworkd:
		return []form{
			{variant: "network", name: "30-lan.network", data: "[Match]\nName=eth0\nMACAddress=" + templateMAC + "\n\n[Network]\nDHCP=ipv4\n"},
			{variant: "link", name: "10-lan.link", data: "[Match]\nOriginalName=eth*\nPermanentMACAddress=" + templateMAC + "\n\n[Link]\nName=lan0\n"},
		}
	case catalogue.StackNM:
		conn := "[connection]\nid=lan\nuuid=5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03\ntype=ethernet\ninterface-name=eth0\n\n[ethernet]\n%s=" + templateMAC + "\n\n[ipv4]\nmethod=auto\n"
		return []form{
			{variant: "mac-address", name: "lan.nmconnection", mode: 0o600, data: fmt.Sprintf(conn, "mac-address")},
			{variant: "cloned-mac-address", name: "lan.nmconnection", mode: 0o600, data: fmt.Sprintf(conn, "cloned-mac-address")},
		}
	case catalogue.StackIfcfg:
		return []form{
			{variant: "HWADDR", name: "ifcfg-eth0", data: "DEVICE=eth0\nBOOTPROTO=dhcp\nONBOOT=yes\nTYPE=Ethernet\nHWADDR=" + templateMAC + "\n"},
			{variant: "MACADDR", name: "ifcfg-eth0", data: "DEVICE=eth0\nBOOTPROTO=dhcp\nONBOOT=yes\nTYPE=Ethernet\nMACADDR=" + templateMAC + "\n"},
		}
	}
	// ifupdown reads interfaces.d only as Debian's interfaces sources it.
	const head = "source /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n"
	eni := "auto eth0\niface eth0 inet dhcp\n    hwaddress ether " + templateMAC + "\n"
	if !pl.Dir {
		return []form{{data: head + "\n" + eni}}
	}
	return []form{{name: "eth0", data: eni, extra: []node{file(path.Join(path.Dir(pl.Path), "interfaces"), head)}}}
}

// duidLLT is a DUID-LLT of the template's MAC, as the clients write one.
const duidLLT = "00:01:00:01:2c:3d:4e:5f:52:54:00:12:34:56"

// dhcpForm is a DHCP client's state file in that client's format.
func dhcpForm(it catalogue.Item, pl catalogue.Place) form {
	lease := "ADDRESS=192.0.2.10\nNETMASK=255.255.255.0\nROUTER=192.0.2.1\nSERVER_ADDRESS=192.0.2.1\nLIFETIME=86400\nCLIENTID=ff" + strings.ReplaceAll("00:12:34:56:"+duidLLT, ":", "") + "\n"
	switch it.Name {
	case catalogue.DhclientLeases:
		name := strings.NewReplacer("*", ".eth0").Replace(pl.Match)
		if name == "" {
			name = "dhclient--eth0.lease"
		}
		return form{name: name, data: "default-duid \"\\000\\001\\000\\001,=N_RT\\000\\0224V\";\nlease {\n  interface \"eth0\";\n  fixed-address 192.0.2.10;\n  option subnet-mask 255.255.255.0;\n  option dhcp-lease-time 86400;\n  option dhcp-client-identifier 1:52:54:0:12:34:56;\n  renew 4 2026/12/03 10:00:00;\n  expire 5 2026/12/04 10:00:00;\n}\n"}
	case catalogue.DhcpcdDUID:
		return form{data: duidLLT + "\n"}
	case catalogue.DhcpcdSecret:
		return form{data: strings.TrimSuffix(strings.Repeat("a7:", 64), ":") + "\n", mode: 0o600}
	case catalogue.DhcpcdLeases:
		name := "dhcpcd-eth0.lease"
		if pl.Match == "*.lease*" {
			name = "eth0.lease"
		}
		return form{name: name, data: bootpReply()}
	case catalogue.NetworkdLeases:
		return form{name: "2", data: "# This is private data. Do not parse.\n" + lease}
	case catalogue.NetworkdDUID:
		return form{name: "50-duid.conf", data: "[DHCPv4]\nDUIDType=link-layer-time\nDUIDRawData=" + duidLLT[6:] + "\n\n[DHCPv6]\nDUIDType=link-layer-time\nDUIDRawData=" + duidLLT[6:] + "\n",
			extra: []node{file("/etc/systemd/network/20-eth0.network", "[Match]\nName=eth0\n\n[Network]\nDHCP=yes\n")}}
	case catalogue.NMLeases:
		return form{name: "internal-5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03-eth0.lease", data: lease}
	case catalogue.NMHistory:
		return form{data: "[timestamps]\n5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03=1733220000\n"}
	case catalogue.WickedDUID:
		if strings.HasSuffix(pl.Path, "iaid.xml") {
			return form{data: "<iaid-map>\n  <iaid device=\"eth0\">1</iaid>\n</iaid-map>\n"}
		}
		return form{data: "<duid-map>\n  <default>" + duidLLT + "</default>\n</duid-map>\n"}
	case catalogue.WickedLeases:
		return form{name: "lease-eth0-dhcp-ipv4.xml", data: "<lease>\n  <family>ipv4</family>\n  <type>dhcp</type>\n  <ipv4:dhcp>\n    <client-id>ff:00:12:34:56:" + duidLLT + "</client-id>\n    <address>192.0.2.10</address>\n  </ipv4:dhcp>\n</lease>\n"}
	case catalogue.LVMDevices:
		return form{data: "# LVM uses devices listed in this file.\n# Created by LVM command vgimportdevices pid 812 at Mon Dec  2 10:00:00 2026\nVERSION=1.1.2\nIDTYPE=sys_wwid IDNAME=naa.6001405e2c1a3f0b9d5e4a7c8b3d2e1f DEVNAME=/dev/sda3 PVID=Xq3lZrTgWnmKp0J4YdH8sVbC2eR6uF1o PART=3\n"}
	case catalogue.Enrolment:
		return form{name: "cache_example.com.ldb", data: "enrolled to EXAMPLE.COM as template-01.example.com\n", mode: 0o600}
	}
	panic("agree: no form for " + it.Name)
}

// bootpReply is a DHCPACK as dhcpcd saves it in a lease file: the BOOTP
// message with the client identifier (option 61) it was given for.
func bootpReply() string {
	b := make([]byte, 236)
	b[0], b[1], b[2] = 2, 1, 6 // BOOTREPLY, Ethernet, hlen
	binary.BigEndian.PutUint32(b[4:], 0x3903f326)
	copy(b[16:], []byte{192, 0, 2, 10})
	mac, _ := hex.DecodeString(strings.ReplaceAll(templateMAC, ":", ""))
	copy(b[28:], mac)
	b = append(b, 99, 130, 83, 99, 53, 1, 5, 61, 7, 1)
	b = append(b, mac...)
	b = append(b, 51, 4, 0, 1, 81, 128, 255)
	return string(b)
}
