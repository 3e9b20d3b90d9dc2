package agree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bootedOnce is a Debian 12 cloud image as it looks after its first boot
// under cloud-init: its own machine ID, host keys, hostname, instance
// state, rendered network config and a DHCP lease.
func bootedOnce() []node {
	k := testKey()
	day := 24 * time.Hour
	inst := "/var/lib/cloud/instances/" + instanceID
	n := osBase()
	return append(n,
		file("/usr/lib/systemd/systemd", "ELF"),
		file("/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so", "ELF"),
		fileMode("/etc/machine-id", machineID+"\n", 0o444),
		link("/var/lib/dbus/machine-id", "/etc/machine-id"),
		file("/etc/fstab", "UUID=0b2c-4d6e / ext4 rw,discard,errors=remount-ro 0 1\n"),
		file("/boot/grub/grub.cfg", "menuentry 'Debian' {\n\tlinux /vmlinuz-6.1.0 root=UUID=0b2c-4d6e ro console=ttyS0\n}\n"),
		file("/etc/hostname", "template-01\n"),
		file("/etc/hosts", "127.0.0.1 localhost\n127.0.1.1 template-01.example.org template-01\n"),
		file("/usr/sbin/sshd", "ELF"), file("/usr/bin/ssh-keygen", "ELF"),
		file("/etc/ssh/sshd_config", "Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"),
		file("/usr/lib/systemd/system/ssh.service", "[Service]\nExecStart=/usr/sbin/sshd -D\n[Install]\nWantedBy=multi-user.target\n"),
		link("/etc/systemd/system/multi-user.target.wants/ssh.service", "/usr/lib/systemd/system/ssh.service"),
		aged(fileMode("/etc/ssh/ssh_host_ed25519_key", k.private, 0o600), day),
		aged(file("/etc/ssh/ssh_host_ed25519_key.pub", k.public), day),
		file("/etc/ssh/sshd_config.d/50-cloud-init.conf", "PasswordAuthentication no\n"),
		file("/usr/bin/cloud-init", "#!/usr/bin/python3\n"),
		file("/etc/cloud/cloud.cfg", "users: [default]\ncloud_init_modules:\n - seed_random\n - set_hostname\n - update_hostname\n - ssh\n - users-groups\ncloud_config_modules:\n - runcmd\n"),
		aged(file(inst+"/sem/config_ssh", ""), day), aged(file(inst+"/sem/config_set_hostname", ""), day),
		file(inst+"/datasource", "DataSourceNoCloud: DataSourceNoCloud [seed=/dev/sr0]\n"),
		file(inst+"/user-data.txt", "#cloud-config\nhostname: template-01\n"),
		file(inst+"/cloud-config.txt", "#cloud-config\nhostname: template-01\n"),
		link("/var/lib/cloud/instance", inst),
		file("/var/lib/cloud/data/instance-id", instanceID+"\n"),
		file("/var/lib/cloud/data/previous-instance-id", "NO_PREVIOUS_INSTANCE_ID\n"),
		file("/var/lib/cloud/data/set-hostname", "{\"hostname\": \"template-01\", \"fqdn\": \"template-01\"}\n"),
		fileMode("/etc/netplan/50-cloud-init.yaml", "network:\n  version: 2\n  ethernets:\n    eth0:\n      match:\n        macaddress: \"52:54:00:12:34:56\"\n      dhcp4: true\n      set-name: eth0\n", 0o600),
		file("/var/lib/dhcp/dhclient.eth0.leases", "lease {\n  interface \"eth0\";\n  fixed-address 192.0.2.10;\n}\n"),
		file("/var/log/cloud-init.log", "provisioned\n"),
	)
}

// rhelBootedOnce is a RHEL 9 style guest: sshd-keygen@ regenerates keys,
// the kernel command line is in a BLS entry, NetworkManager keeps a
// profile and a lease; no cloud-init.
func rhelBootedOnce() []node {
	k := testKey()
	n := osBase()
	return append(n,
		file("/usr/lib/os-release", "ID=\"rhel\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"9.4\"\n"),
		file("/usr/lib/systemd/systemd", "ELF"),
		file("/usr/lib64/systemd/libsystemd-shared-252.so", "ELF"),
		fileMode("/etc/machine-id", otherMachineID+"\n", 0o444),
		file("/etc/fstab", "UUID=0b2c-4d6e / xfs defaults 0 0\n"),
		file("/boot/loader/entries/0123-5.14.0.conf", "title Red Hat Enterprise Linux\nversion 5.14.0\nlinux /vmlinuz-5.14.0\noptions root=UUID=0b2c-4d6e ro crashkernel=auto\n"),
		file("/etc/hostname", "rhel-template\n"),
		file("/etc/hosts", "127.0.0.1 localhost\n"),
		file("/usr/sbin/sshd", "ELF"), file("/usr/bin/ssh-keygen", "ELF"),
		file("/etc/ssh/sshd_config", "Include /etc/ssh/sshd_config.d/*.conf\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"),
		file("/usr/lib/systemd/system/sshd.service", "[Service]\nExecStart=/usr/sbin/sshd -D\n[Install]\nWantedBy=multi-user.target\n"),
		file("/usr/lib/systemd/system/sshd-keygen@.service", "[Service]\nExecStart=/usr/libexec/openssh/sshd-keygen %i\n"),
		link("/etc/systemd/system/multi-user.target.wants/sshd.service", "/usr/lib/systemd/system/sshd.service"),
		fileMode("/etc/ssh/ssh_host_ed25519_key", k.private, 0o600),
		file("/etc/ssh/ssh_host_ed25519_key.pub", k.public),
		fileMode("/etc/NetworkManager/system-connections/eth0.nmconnection",
			"[connection]\nid=eth0\nuuid=5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03\ntype=ethernet\ninterface-name=eth0\n\n[ethernet]\nmac-address=52:54:00:12:34:56\n\n[ipv4]\nmethod=auto\n", 0o600),
		file("/var/lib/NetworkManager/internal-5fb06bd0-eth0.lease", "ADDRESS=192.0.2.11\n"),
		fileMode("/var/lib/NetworkManager/secret_key", "SECRET", 0o600),
	)
}

// sealedRoot builds nodes and seals them with the real sealprep apply.
func sealedRoot(nodes func() []node, args ...string) func(t testing.TB, dir string) {
	return func(t testing.TB, dir string) {
		buildRoot(t, dir, nodes())
		apply(t, dir, args...)
	}
}

func apply(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin.sealprep, append([]string{"apply", "--yes", "--root", dir}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sealprep apply --root %s %s: %v\n%s", filepath.Base(dir), strings.Join(args, " "), err, out)
	}
}

// thenRemove seals, then removes the sealed /etc/machine-id and writes
// boot configuration: a template sealed with a missing machine-id, the
// case where the two readings of the boot root mode meet.
func thenRemove(boot ...node) func(t testing.TB, dir string) {
	return func(t testing.TB, dir string) {
		sealedRoot(bootedOnce)(t, dir)
		if err := os.Remove(filepath.Join(dir, "etc/machine-id")); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "boot/grub/grub.cfg")); err != nil {
			t.Fatal(err)
		}
		buildRoot(t, dir, boot)
	}
}

const blsHead = "title Debian GNU/Linux\nversion 6.1.0\nlinux /vmlinuz-6.1.0\n"

// handRoots are the roots made by hand: real sealprep output on guests
// that look booted once, and sealed templates with a missing machine-id
// whose boot configuration the two binaries read differently.
func handRoots() []guestRoot {
	return []guestRoot{
		{"debian-booted-once", "Debian 12 with cloud-init after its first boot, not sealed",
			func(t testing.TB, dir string) { buildRoot(t, dir, bootedOnce()) }},
		{"debian-sealed", "debian-booted-once after sealprep apply", sealedRoot(bootedOnce)},
		{"debian-sealed-uninitialized", "debian-booted-once after sealprep apply --machine-id-mode uninitialized",
			sealedRoot(bootedOnce, "--machine-id-mode", "uninitialized")},
		{"debian-sealed-twice", "debian-sealed sealed again", func(t testing.TB, dir string) {
			sealedRoot(bootedOnce)(t, dir)
			apply(t, dir)
		}},
		{"debian-nocloud-sealed", "Debian 12 without cloud-init, networkd DHCP, after sealprep apply (sealprep installs its keygen unit)",
			sealedRoot(func() []node {
				var out []node
				for _, n := range bootedOnce() {
					if !strings.Contains(n.path, "cloud") {
						out = append(out, n)
					}
				}
				return append(out, file("/etc/systemd/network/20-eth0.network", "[Match]\nName=eth0\n\n[Network]\nDHCP=yes\n"))
			})},
		{"rhel-booted-once", "RHEL 9 style guest, not sealed", func(t testing.TB, dir string) { buildRoot(t, dir, rhelBootedOnce()) }},
		{"rhel-sealed", "rhel-booted-once after sealprep apply", sealedRoot(rhelBootedOnce)},
		{"sealed-missing-fstab-ro-rw", "debian-sealed, /etc/machine-id removed, fstab \"ro,rw\", kernel command line rw",
			thenRemove(file("/etc/fstab", "UUID=0b2c-4d6e / ext4 ro,rw 0 1\n"), file("/etc/kernel/cmdline", "root=UUID=0b2c-4d6e rw\n"))},
		{"sealed-missing-fstab-two-lines", "debian-sealed, /etc/machine-id removed, fstab mounts / ro then rw, kernel command line rw",
			thenRemove(file("/etc/fstab", "UUID=0b2c-4d6e / ext4 ro 0 1\nUUID=0b2c-4d6e / ext4 rw 0 1\n"), file("/etc/kernel/cmdline", "root=UUID=0b2c-4d6e rw\n"))},
		{"sealed-missing-bls-two-lines", "debian-sealed, /etc/machine-id removed, a BLS entry with options \"ro\" then \"rw\"",
			thenRemove(file("/boot/loader/entries/debian.conf", blsHead+"options root=UUID=0b2c-4d6e ro\noptions rw\n"))},
		{"sealed-missing-bls-split", "debian-sealed, /etc/machine-id removed, a BLS entry whose rw is on a second options line",
			thenRemove(file("/boot/loader/entries/debian.conf", blsHead+"options root=UUID=0b2c-4d6e quiet\noptions rw\n"))},
		{"sealed-missing-kernel-rw-bls-ro", "debian-sealed, /etc/machine-id removed, /etc/kernel/cmdline rw but a BLS entry ro",
			thenRemove(file("/etc/kernel/cmdline", "root=UUID=0b2c-4d6e rw\n"), file("/boot/loader/entries/debian.conf", blsHead+"options root=UUID=0b2c-4d6e ro\n"))},
		{"sealed-missing-no-cmdline", "debian-sealed, /etc/machine-id removed, no kernel command line in the image",
			thenRemove()},
		{"sealed-missing-rw", "debian-sealed, /etc/machine-id removed, every command line rw and fstab rw",
			thenRemove(file("/etc/kernel/cmdline", "root=UUID=0b2c-4d6e rw\n"))},
	}
}
