package catalogue

// The item names, as the template record, reports and docs give them.
const (
	MachineID           = "machine-id"
	DBusMachineID       = "dbus-machine-id"
	MachineIDCmdline    = "machine-id-cmdline"
	MachineIDCredential = "machine-id-credential"
	SSHHostKeys         = "ssh-host-keys"
	RandomSeed          = "random-seed"
	CredentialSecret    = "credential-secret"
	DhclientLeases      = "dhclient-leases"
	DhcpcdDUID          = "dhcpcd-duid"
	DhcpcdSecret        = "dhcpcd-secret"
	DhcpcdLeases        = "dhcpcd-leases"
	NetworkdLeases      = "networkd-leases"
	NetworkdDUID        = "networkd-duid"
	NMLeases            = "nm-leases"
	NMSecretKey         = "nm-secret-key"
	NMHistory           = "nm-history"
	WickedDUID          = "wicked-duid"
	WickedLeases        = "wicked-leases"
	UdevPersistentNet   = "udev-persistent-net"
	MACPins             = "mac-pins"
	Hostname            = "hostname"
	CloudInitInstance   = "cloud-init-instance"
	LVMDevices          = "lvm-devices"
	Enrolment           = "host-enrolment"
)

// Stacks name the software an item's place belongs to.
const (
	StackSystemd   = "systemd"
	StackDBus      = "D-Bus"
	StackBoot      = "boot loader"
	StackOpenSSH   = "OpenSSH"
	StackDhclient  = "ISC dhclient"
	StackDhcpcd6   = "dhcpcd 6"
	StackDhcpcd7   = "dhcpcd 7+"
	StackNetworkd  = "systemd-networkd"
	StackNM        = "NetworkManager"
	StackWicked    = "wicked"
	StackUdev      = "udev"
	StackNetplan   = "netplan"
	StackIfcfg     = "ifcfg (Red Hat, SUSE)"
	StackENI       = "ifupdown (Debian)"
	StackCloudInit = "cloud-init"
	StackLVM       = "LVM"
	StackRedHat    = "Red Hat"
	StackSUSE      = "SUSE"
	StackFreeIPA   = "FreeIPA, SSSD, Kerberos"
)

func file(stack, p string) Place       { return Place{Stack: stack, Path: p} }
func dir(stack, p, match string) Place { return Place{Stack: stack, Path: p, Dir: true, Match: match} }
func files(stack string, ps ...string) []Place {
	out := make([]Place, len(ps))
	for i, p := range ps {
		out[i] = file(stack, p)
	}
	return out
}

func join(ps ...[]Place) []Place {
	var out []Place
	for _, p := range ps {
		out = append(out, p...)
	}
	return out
}

// Items is the catalogue, in the order sealprep's record and reports list
// items. Every entry cites where its places come from.
var Items = []Item{
	{
		// machine-id(5): "The machine ID is a single newline-terminated,
		// hexadecimal, 32-character, lowercase ID"; an empty file, not a
		// missing one, on images: "uninitialized" → first boot fills it.
		Name: MachineID, What: "the machine ID",
		Places: files(StackSystemd, "/etc/machine-id"),
		Rule:   Empty, Op: "machine-id", Compare: "machine-id",
		Shared: "one machine ID: one DHCP DUID (systemd-networkd), one journal stream, one IPv6 stable address seed",
		Reader: "identity.ReadMachineID",
		Source: "machine-id(5); virt-sysprep machine-id",
	},
	{
		// machine-id(5): "/var/lib/dbus/machine-id ... may be a symlink
		// to /etc/machine-id"; dbus-uuidgen(1) --ensure writes it.
		Name: DBusMachineID, What: "the D-Bus machine ID",
		Places: files(StackDBus, "/var/lib/dbus/machine-id"),
		Rule:   Absent, Op: "machine-id", Compare: "machine-id",
		Shared: "the D-Bus machine ID, which D-Bus clients use as the machine's identity",
		Source: "machine-id(5), dbus-uuidgen(1); virt-sysprep machine-id",
	},
	{
		// systemd(1) systemd.machine_id=; kernel-install(8) reads
		// /etc/kernel/cmdline; the Boot Loader Specification's entries on
		// the ESP, XBOOTLDR (/boot) and /efi; GRUB's generated grub.cfg,
		// its defaults and grubenv's kernelopts (Red Hat's BLS setup).
		Name: MachineIDCmdline, What: "a machine ID on the kernel command line",
		Places: join(
			files(StackBoot, "/etc/kernel/cmdline", "/boot/grub/grub.cfg", "/boot/grub2/grub.cfg", "/etc/default/grub"),
			[]Place{dir(StackBoot, "/etc/default/grub.d", "*.cfg")},
			files(StackBoot, "/boot/grub/grubenv", "/boot/grub2/grubenv"),
			[]Place{
				dir(StackBoot, "/boot/loader/entries", "*.conf"),
				dir(StackBoot, "/efi/loader/entries", "*.conf"),
				dir(StackBoot, "/boot/efi/loader/entries", "*.conf"),
			},
		),
		Rule: Unpinned, Op: "machine-id-cmdline", Compare: "machine-id",
		Shared: "the machine ID on every boot, whatever /etc/machine-id holds",
		Reader: "identity.ReadMachineIDLeaks",
		Source: "systemd(1) systemd.machine_id=, systemd.system-credentials(7), kernel-install(8), Boot Loader Specification, GRUB manual (grubenv)",
	},
	{
		// systemd.system-credentials(7): system.machine_id; the credential
		// stores of systemd.exec(5) LoadCredential=, without /run.
		Name: MachineIDCredential, What: "a system.machine_id credential",
		Places: files(StackSystemd,
			"/etc/credstore/system.machine_id", "/etc/credstore.encrypted/system.machine_id",
			"/usr/local/lib/credstore/system.machine_id", "/usr/local/lib/credstore.encrypted/system.machine_id",
			"/usr/lib/credstore/system.machine_id", "/usr/lib/credstore.encrypted/system.machine_id"),
		Rule: Absent, Op: "machine-id-credential", Compare: "machine-id",
		Shared: "the machine ID on every boot, whatever /etc/machine-id holds",
		Source: "systemd.system-credentials(7), systemd.exec(5) LoadCredential=",
	},
	{
		// sshd(8) FILES; sshd_config(5) HostKey (the defaults when none is
		// named); identity.ReadHostKeys follows HostKey through Include.
		Name: SSHHostKeys, What: "SSH host keys",
		Places: files(StackOpenSSH,
			"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key"),
		Rule: Regenerated, Op: "ssh-host-keys", Compare: "ssh-host-key",
		Shared: "SSH host keys: one clone can impersonate another, and known_hosts cannot tell them apart",
		Reader: "identity.ReadHostKeys",
		Source: "sshd(8) FILES, sshd_config(5) HostKey; virt-sysprep ssh-hostkeys; waagent -deprovision",
	},
	{
		// systemd-random-seed.service(8); systemd-boot(7) "random-seed" on
		// the ESP/XBOOTLDR; Debian's urandom init script and older paths.
		Name: RandomSeed, What: "a saved random seed",
		Places: join(
			files(StackSystemd, "/var/lib/systemd/random-seed"),
			files("sysvinit", "/var/lib/random-seed", "/var/lib/urandom/random-seed", "/var/lib/misc/random-seed"),
			files(StackBoot, "/boot/efi/loader/random-seed", "/efi/loader/random-seed", "/boot/loader/random-seed"),
		),
		Rule: Absent, Op: "random-seed",
		Shared: "one saved entropy seed: their random pools start alike",
		Source: "systemd-random-seed.service(8), systemd-boot(7); virt-sysprep customize (random-seed)",
	},
	{
		// systemd-creds(1): the host key encrypted credentials are bound
		// to, made on first use.
		Name: CredentialSecret, What: "systemd's credential.secret",
		Places: files(StackSystemd, "/var/lib/systemd/credential.secret"),
		Rule:   Absent, Op: "systemd-credential-secret",
		Shared: "the key their encrypted credentials are bound to: a credential sealed on one clone opens on all",
		Source: "systemd-creds(1) --with-key=host",
	},
	{
		// dhclient(8) FILES: /var/lib/dhcp/dhclient.leases (Debian),
		// /var/lib/dhclient (Red Hat), -lf per interface.
		Name: DhclientLeases, What: "a dhclient lease",
		Places: []Place{
			dir(StackDhclient, "/var/lib/dhcp", "dhclient*.leases"),
			dir(StackDhclient, "/var/lib/dhclient", ""),
			dir(StackDhclient, "/var/db", "dhclient.leases*"),
		},
		Rule: Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "a DHCP lease and client identifier: the DHCP server may give them the template's address",
		Reader: "identity.ReadDHCPState",
		Source: "dhclient(8) FILES; virt-sysprep dhcp-client-state",
	},
	{
		// dhcpcd(8) FILES: SYSCONFDIR/dhcpcd.duid up to 6, DBDIR/duid
		// since 7 (DBDIR /var/lib/dhcpcd in distributions, /var/db/dhcpcd
		// by default: configure --dbdir).
		Name: DhcpcdDUID, What: "dhcpcd's DUID",
		Places: join(
			files(StackDhcpcd6, "/etc/dhcpcd.duid"),
			files(StackDhcpcd7, "/var/lib/dhcpcd/duid", "/var/db/dhcpcd/duid"),
		),
		Rule: Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "one DHCP client identifier (DUID): the DHCP server gives them one address",
		Reader: "identity.ReadDHCPState",
		Source: "dhcpcd(8) FILES, dhcpcd src/defs.h DUID",
	},
	{
		// dhcpcd.conf(5) slaac private: the secret seeds RFC 7217 stable
		// private addresses.
		Name: DhcpcdSecret, What: "dhcpcd's secret",
		Places: join(
			files(StackDhcpcd6, "/etc/dhcpcd.secret"),
			files(StackDhcpcd7, "/var/lib/dhcpcd/secret", "/var/db/dhcpcd/secret"),
		),
		Rule: Absent, Op: "dhcp-leases",
		Shared: "dhcpcd's secret: the same stable private IPv6 addresses on one network",
		Reader: "identity.ReadDHCPState",
		Source: "dhcpcd(8) FILES, dhcpcd.conf(5) slaac private, src/defs.h SECRET",
	},
	{
		// dhcpcd(8) FILES: DBDIR/interface-ssid.lease and .lease6; dhcpcd 6
		// wrote /var/db/dhcpcd-interface.lease.
		Name: DhcpcdLeases, What: "a dhcpcd lease",
		Places: []Place{
			dir(StackDhcpcd7, "/var/lib/dhcpcd", "*.lease*"),
			dir(StackDhcpcd7, "/var/db/dhcpcd", "*.lease*"),
			dir(StackDhcpcd6, "/var/db", "dhcpcd-*.lease*"),
		},
		Rule: Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "a DHCP lease: the DHCP server may give them the template's address",
		Reader: "identity.ReadDHCPState",
		Source: "dhcpcd(8) FILES, src/defs.h LEASEFILE",
	},
	{
		// systemd-networkd(8) keeps leases under /run (gone at reboot, but
		// present in a root captured from a running guest).
		Name: NetworkdLeases, What: "a systemd-networkd lease",
		Places: []Place{dir(StackNetworkd, "/run/systemd/netif/leases", "")},
		Rule:   Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "a DHCP lease: the DHCP server may give them the template's address",
		Source: "systemd-networkd(8), src/network/networkd-dhcp4.c (leases under /run/systemd/netif/leases)",
	},
	{
		// networkd.conf(5) [DHCPv4]/[DHCPv6] DUIDType= and DUIDRawData=:
		// the default DUID derives from the machine ID (so the machine-id
		// operation renews it); a raw DUID pinned here is every clone's.
		// Read in systemd's order: /usr/lib, /run, /etc, then drop-ins.
		Name: NetworkdDUID, What: "systemd-networkd's DUID settings",
		Places: []Place{
			file(StackNetworkd, "/usr/lib/systemd/networkd.conf"),
			file(StackNetworkd, "/run/systemd/networkd.conf"),
			file(StackNetworkd, "/etc/systemd/networkd.conf"),
			dir(StackNetworkd, "/usr/lib/systemd/networkd.conf.d", "*.conf"),
			dir(StackNetworkd, "/run/systemd/networkd.conf.d", "*.conf"),
			dir(StackNetworkd, "/etc/systemd/networkd.conf.d", "*.conf"),
		},
		Rule: Unpinned, Op: "machine-id", Compare: "dhcp-client-id",
		Shared: "one DHCP client identifier when DUIDRawData= is set: the DHCP server gives them one address",
		Reader: "netconf.Read (networkd.conf), guestid.Read",
		Source: "networkd.conf(5) DUIDType=, DUIDRawData=; systemd.network(5) [DHCPv4] ClientIdentifier=",
	},
	{
		// NetworkManager(8) FILES: /var/lib/NetworkManager holds its
		// internal client's leases (internal-UUID-IFACE.lease) and
		// dhclient's (dhclient-UUID-IFACE.lease).
		Name: NMLeases, What: "a NetworkManager lease",
		Places: []Place{dir(StackNM, "/var/lib/NetworkManager", "*.lease")},
		Rule:   Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "a DHCP lease: the DHCP server may give them the template's address",
		Reader: "identity.ReadDHCPState",
		Source: "NetworkManager(8) FILES; virt-sysprep dhcp-client-state",
	},
	{
		// NetworkManager.conf(5) ipv6.addr-gen-mode=stable-privacy and
		// ethernet.cloned-mac-address=stable: both derive from secret_key,
		// as do stable DHCP client IDs (ipv4.dhcp-client-id=stable).
		Name: NMSecretKey, What: "NetworkManager's secret_key",
		Places: files(StackNM, "/var/lib/NetworkManager/secret_key"),
		Rule:   Absent, Op: "nm-identity",
		Shared: "the same stable-privacy IPv6 addresses, stable MACs and stable DHCP client IDs",
		Source: "NetworkManager(8) FILES, nm-settings-nmcli(5) ipv6.addr-gen-mode, ipv4.dhcp-client-id",
	},
	{
		// NetworkManager(8) FILES: timestamps and seen-bssids are the
		// template's connection history.
		Name: NMHistory, What: "NetworkManager's connection history",
		Places: files(StackNM, "/var/lib/NetworkManager/timestamps", "/var/lib/NetworkManager/seen-bssids"),
		Rule:   Absent, Op: "nm-identity",
		Shared: "the template's connection history",
		Source: "NetworkManager(8) FILES",
	},
	{
		// wicked(8): /var/lib/wicked/duid.xml and iaid.xml hold the DUID
		// and IAIDs it presents (SUSE).
		Name: WickedDUID, What: "wicked's DUID and IAIDs",
		Places: files(StackWicked, "/var/lib/wicked/duid.xml", "/var/lib/wicked/iaid.xml"),
		Rule:   Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "one DHCP client identifier (DUID): the DHCP server gives them one address",
		Source: "wicked(8), wicked-config(5) duid; SUSE's sysprep notes",
	},
	{
		Name: WickedLeases, What: "a wicked lease",
		Places: []Place{dir(StackWicked, "/var/lib/wicked", "lease-*")},
		Rule:   Absent, Op: "dhcp-leases", Compare: "dhcp-client-id",
		Shared: "a DHCP lease: the DHCP server may give them the template's address",
		Source: "wicked(8) (lease-IFACE-TYPE-FAMILY.xml)",
	},
	{
		// udev's persistent-net generator (removed from systemd 209 but
		// kept by old images) names interfaces by the template's MACs.
		Name: UdevPersistentNet, What: "udev persistent-net rules",
		Places: files(StackUdev, "/etc/udev/rules.d/70-persistent-net.rules"),
		Rule:   Absent, Op: "net-mac-pins", Compare: "mac-binding",
		Shared: "interface names bound to the template's MACs: a clone's NIC becomes eth1 and its configuration for eth0 never applies",
		Source: "udev 75-persistent-net-generator.rules; virt-sysprep udev-persistent-net",
	},
	{
		// netplan(5) match: macaddress; systemd.network(5) and
		// systemd.link(5) [Match] MACAddress=/PermanentMACAddress=;
		// nm-settings-keyfile(5) ethernet.mac-address and
		// cloned-mac-address; ifcfg HWADDR/MACADDR; interfaces(5)
		// hwaddress.
		Name: MACPins, What: "network configuration bound to the template's MAC",
		// The directories in each stack's order of priority (a later one
		// replaces a file of the same name in an earlier one).
		Places: []Place{
			dir(StackNetplan, "/lib/netplan", "*.yaml"),
			dir(StackNetplan, "/etc/netplan", "*.yaml"),
			dir(StackNetplan, "/run/netplan", "*.yaml"),
			dir(StackNetworkd, "/run/systemd/network", ""),
			dir(StackNetworkd, "/etc/systemd/network", ""),
			dir(StackNM, "/run/NetworkManager/system-connections", ""),
			dir(StackNM, "/etc/NetworkManager/system-connections", ""),
			dir(StackIfcfg, "/etc/sysconfig/network-scripts", "ifcfg-*"),
			dir(StackIfcfg, "/etc/sysconfig/network", "ifcfg-*"),
			file(StackENI, "/etc/network/interfaces"),
			dir(StackENI, "/etc/network/interfaces.d", ""),
		},
		Rule: Unpinned, Op: "net-mac-pins", Compare: "mac-binding",
		Shared: "network configuration that matches the template's MAC: a clone with its own MAC comes up without a network",
		Reader: "netconf.Read (MACBindings)",
		Source: "netplan(5), systemd.network(5), systemd.link(5), nm-settings-keyfile(5), ifcfg-rh, interfaces(5); virt-sysprep net-hwaddr",
	},
	{
		// hostname(5); SUSE's /etc/HOSTNAME.
		Name: Hostname, What: "the static hostname",
		Places: join(files(StackSystemd, "/etc/hostname"), files(StackSUSE, "/etc/HOSTNAME")),
		Rule:   Empty, Op: "hostname", Compare: "hostname",
		Shared: "one hostname until cloud-init or DHCP sets another",
		Reader: "hostnamefile.Read",
		Source: "hostname(5); virt-sysprep net-hostname",
	},
	{
		// cloud-init's docs (cloud-init clean, "Instance data"): the
		// instance directory, its link, the instance-id caches.
		Name: CloudInitInstance, What: "cloud-init's instance state",
		Places: join(
			files(StackCloudInit, "/var/lib/cloud/instance", "/var/lib/cloud/data/instance-id",
				"/var/lib/cloud/data/previous-instance-id"),
			[]Place{dir(StackCloudInit, "/var/lib/cloud/instances", "")},
		),
		Rule: Absent, Op: "cloud-init", Compare: "instance-id",
		Shared: "cloud-init's record of the template's instance: with the same instance-id, first-boot modules do not run again",
		Reader: "identity.ReadTemplateState",
		Source: "cloud-init clean --logs --seed (cloudinit/cmd/clean.py); cloud-init docs, Boot stages",
	},
	{
		// lvmdevices(8): the devices file lists the template's PVs by
		// serial and WWID; a clone's disks are not in it.
		Name: LVMDevices, What: "LVM's system.devices",
		Places: files(StackLVM, "/etc/lvm/devices/system.devices"),
		Rule:   Absent, Op: "lvm-devices-file",
		Shared: "the template's disk IDs in LVM's devices file: a clone's volume groups are not activated",
		Source: "lvmdevices(8); virt-sysprep lvm-system-devices",
	},
	{
		// Per-host enrolment that virt-sysprep's operations of those names
		// clear.
		Name: Enrolment, What: "per-host enrolment (Kerberos, IPA, RHSM, SUSEConnect)",
		Places: join(
			files(StackFreeIPA, "/etc/krb5.keytab", "/etc/ipa/ca.crt", "/etc/ipa/default.conf"),
			files(StackRedHat, "/etc/sysconfig/rhn/systemid", "/etc/sysconfig/rhn/osad-auth.conf",
				"/var/lib/yum/uuid", "/etc/sysconfig/hw-uuid", "/etc/smolt/uuid", "/etc/smolt/hw-uuid"),
			files(StackSUSE, "/etc/zypp/credentials.d/SCCcredentials", "/etc/SUSEConnect"),
			[]Place{
				dir(StackFreeIPA, "/var/lib/ipa-client/sysrestore", ""),
				dir(StackFreeIPA, "/var/lib/ipa-client/pki", ""),
				dir(StackFreeIPA, "/var/lib/sss/db", ""),
				dir(StackRedHat, "/etc/pki/consumer", ""),
				dir(StackRedHat, "/etc/pki/entitlement", ""),
			},
		),
		Rule: Absent, Op: "host-credentials",
		Shared: "one host's enrolment: a Kerberos keytab, an RHSM or SUSE registration several machines would claim",
		Source: "virt-sysprep kerberos-hostkeys, ipa-client, rhn-systemid, rh-subscription-manager, yum-uuid, smolt-uuid",
	},
}
