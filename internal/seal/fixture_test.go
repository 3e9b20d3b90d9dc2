package seal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"golang.org/x/sys/unix"
)

// node is one entry of a fixture tree. Kind: 'f' file (Data is the
// content), 'd' dir, 'l' symlink (Data is the target), 'p' FIFO, 'c' char
// device (root only; Data "maj:min").
type node struct {
	Path string
	Kind byte
	Data string
	Mode os.FileMode
}

func f(p, data string) node                 { return node{p, 'f', data, 0o644} }
func fm(p, data string, m os.FileMode) node { return node{p, 'f', data, m} }
func d(p string) node                       { return node{p, 'd', "", 0o755} }
func l(p, target string) node               { return node{p, 'l', target, 0} }

// build creates nodes under dir, parents first as needed.
func build(t testing.TB, dir string, nodes []node) {
	t.Helper()
	made := map[string]bool{}
	for _, n := range nodes {
		hp := filepath.Join(dir, n.Path)
		if parent := filepath.Dir(hp); !made[parent] {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			// Never write through a fixture's own symlink onto the host.
			if real, err := filepath.EvalSymlinks(parent); err != nil || (real != dir && !strings.HasPrefix(real, dir+"/")) {
				t.Fatalf("build %s: parent resolves outside the fixture (%s, %v)", n.Path, real, err)
			}
			made[parent] = true
		}
		var err error
		switch n.Kind {
		case 'f':
			err = os.WriteFile(hp, []byte(n.Data), 0o600)
			if err == nil {
				err = os.Chmod(hp, n.Mode)
			}
		case 'd':
			err = os.MkdirAll(hp, 0o755)
			if err == nil && n.Mode != 0 {
				err = os.Chmod(hp, n.Mode)
			}
		case 'l':
			err = os.Symlink(n.Data, hp)
		case 'p':
			err = unix.Mkfifo(hp, 0o644)
		case 'c':
			var maj, min uint32
			fmt.Sscanf(n.Data, "%d:%d", &maj, &min)
			err = unix.Mknod(hp, unix.S_IFCHR|0o600, int(unix.Mkdev(maj, min)))
		default:
			err = fmt.Errorf("bad node kind %q", n.Kind)
		}
		if err != nil {
			t.Fatalf("build %s: %v", n.Path, err)
		}
	}
}

const (
	oldMachineID = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b\n"
	passwd       = "root:x:0:0:root:/root:/bin/bash\n" +
		"daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n" +
		"alice:x:1000:1000:Alice:/home/alice:/bin/bash\n" +
		"svc:x:998:998:svc:/srv/svc/:/bin/sh\n"
	cloudCfg = "users: [default]\ncloud_init_modules:\n - migrator\n - seed_random\n - [ssh, always]\n - users-groups\n" +
		"cloud_config_modules:\n - runcmd\n"
)

// base is what every distribution fixture has.
func base(osID string) []node {
	return []node{
		f("/usr/lib/os-release", "ID="+osID+"\n"),
		l("/etc/os-release", "../usr/lib/os-release"),
		f("/etc/passwd", passwd),
		fm("/etc/shadow", "root:$6$salt$hash:19000:0:99999:7:::\nalice:$6$x$y:19000:0:99999:7:::\n", 0o640),
		f("/etc/group", "root:x:0:\n"),
		fm("/etc/machine-id", oldMachineID, machineIDMode()),
		f("/etc/hostname", "template-01\n"),
		f("/etc/hosts", "127.0.0.1 localhost\n127.0.1.1 template-01.example.org template-01\n"),
		f("/usr/lib/systemd/systemd", "ELF"),
		f("/usr/lib/x86_64-linux-gnu/systemd/libsystemd-shared-252.so", "ELF"),
		d("/etc/systemd/system"),
		f("/usr/sbin/sshd", "ELF"),
		f("/usr/bin/ssh-keygen", "ELF"),
		fm("/etc/ssh/ssh_host_ed25519_key", "PRIVATE", 0o600),
		f("/etc/ssh/ssh_host_ed25519_key.pub", "ssh-ed25519 AAAA"),
		fm("/etc/ssh/ssh_host_rsa_key", "PRIVATE", 0o600),
		f("/etc/ssh/ssh_host_rsa_key.pub", "ssh-rsa AAAA"),
		f("/etc/ssh/sshd_config", "Include /etc/ssh/sshd_config.d/*.conf\n"),
		d("/run"),
		l("/var/run", "/run"),
		f("/run/utmp", "utmp-records"),
		fm("/var/lib/systemd/random-seed", "SEED", 0o600),
		fm("/var/lib/systemd/credential.secret", "SECRET", 0o400),
		d("/var/log/journal"),
		f("/var/log/journal/4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b/system.journal", "LPKSHHRH"),
		f("/var/log/journal/4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b/user-1000.journal", "LPKSHHRH"),
		fm("/var/log/wtmp", "wtmp-records", 0o664),
		fm("/var/log/btmp", "btmp-records", 0o660),
		f("/var/log/wtmp.1", "old-wtmp"),
		f("/var/log/lastlog", "lastlog"),
		f("/root/.bash_history", "passwd alice\n"),
		f("/home/alice/.bash_history", "sudo -i\n"),
		f("/home/alice/.ssh/authorized_keys", "ssh-ed25519 AAAA alice\n"),
		f("/root/.ssh/authorized_keys", "ssh-ed25519 AAAA root\n"),
		f("/srv/svc/.python_history", "import os\n"),
		l("/home/alice/.zsh_history", "/dev/null"),
		f("/tmp/build.log", "x"),
		f("/tmp/.hidden", "x"),
		f("/tmp/sub/dir/file", "x"),
		l("/tmp/link-out", "/etc/passwd"),
		f("/var/tmp/cache.bin", "x"),
		f("/etc/passwd-", passwd),
		f("/etc/shadow-", "root:$6$old:19000::::::\n"),
		f("/var/crash/_usr_bin_x.0.crash", "CORE"),
		f("/var/lib/systemd/coredump/core.x.1000.zst", "CORE"),
		f("/var/spool/cron/crontabs/alice", "* * * * * true\n"),
		f("/var/mail/alice", "From: cron\n"),
		f("/etc/machine-info", "PRETTY_HOSTNAME=Template\n"),
	}
}

// debianNodes is a Debian/Ubuntu-like root with cloud-init.
func debianNodes() []node {
	return append(base("debian"),
		f("/var/lib/dbus/machine-id", oldMachineID),
		f("/usr/bin/cloud-init", "#!/usr/bin/python3\n"),
		f("/etc/cloud/cloud.cfg", cloudCfg),
		f("/etc/cloud/cloud.cfg.d/05_logging.cfg", "output: {all: '| tee -a /var/log/cloud-init-output.log'}\n"),
		f("/etc/cloud/cloud.cfg.d/99-installer.cfg", "datasource_list: [ None ]\n"),
		fm("/etc/cloud/clean.d/10-site", "#!/bin/sh\n", 0o755),
		f("/etc/cloud/clean.d/README", "not executable"),
		l("/var/lib/cloud/instance", "/var/lib/cloud/instances/iid-template"),
		f("/var/lib/cloud/instances/iid-template/user-data.txt", "#cloud-config\npassword: hunter2\n"),
		f("/var/lib/cloud/instances/iid-template/sem/config_ssh", ""),
		f("/var/lib/cloud/data/instance-id", "iid-template\n"),
		f("/var/lib/cloud/data/set-hostname", "{\"fqdn\": \"template-01\"}\n"),
		f("/var/lib/cloud/seed/nocloud/meta-data", "instance-id: iid-template\n"),
		f("/var/log/cloud-init.log", "cloud-init log"),
		f("/var/log/cloud-init-output.log", "output"),
		f("/var/log/cloud-init.log.1", "older"),
		f("/etc/netplan/50-cloud-init.yaml", "network:\n  ethernets:\n    eth0:\n      match: {macaddress: '52:54:00:12:34:56'}\n      set-name: eth0\n"),
		f("/etc/netplan/60-admin.yaml", "network:\n  ethernets:\n    ens4:\n      match: {macaddress: '52:54:00:ab:cd:ef'}\n"),
		f("/etc/ssh/sshd_config.d/50-cloud-init.conf", "PasswordAuthentication yes\n"),
		f("/var/lib/dhcp/dhclient.eth0.leases", "lease { fixed-address 192.0.2.10; }\n"),
		f("/var/lib/dhcpcd/duid", "DUID"),
		f("/var/lib/dhcpcd/eth0.lease", "LEASE"),
		f("/var/log/syslog", "template-01 kernel: boot\n"),
		f("/var/log/syslog.1", "old"),
		f("/var/log/syslog.2.gz", "gz"),
		f("/var/log/auth.log", "sshd: Accepted publickey for alice\n"),
		f("/var/log/apt/history.log", "Start-Date: 2024-01-01\n"),
		f("/var/log/apt/term.log.1.gz", "gz"),
		f("/var/log/installer/syslog", "subiquity"),
		f("/var/log/empty.log", ""),
		l("/var/log/README", "../../usr/share/doc/systemd/README.logs"),
		f("/var/cache/apt/archives/openssh-server_9.2_amd64.deb", "DEB"),
		f("/var/cache/apt/archives/partial/x.deb", "DEB"),
		f("/var/cache/apt/archives/lock", ""),
		f("/var/cache/apt/pkgcache.bin", "CACHE"),
		f("/etc/resolv.conf.real", "nameserver 192.0.2.53\n"),
		l("/etc/resolv.conf", "../run/systemd/resolve/stub-resolv.conf"),
	)
}

// debianNoCloudNodes is Debian without cloud-init: nothing regenerates
// host keys, so ssh-host-keys installs its unit.
func debianNoCloudNodes() []node {
	return append(base("debian"),
		l("/var/lib/dbus/machine-id", "/etc/machine-id"),
		f("/usr/lib/systemd/system/ssh.service", "[Service]\nExecStartPre=/usr/sbin/sshd -t\nExecStart=/usr/sbin/sshd -D\n"),
		f("/var/log/syslog", "log\n"),
	)
}

// rhelNodes is a RHEL/Fedora-like root with NetworkManager and ifcfg.
func rhelNodes() []node {
	return append(base("rhel"),
		// The machine-id leak paths: a BLS entry and a credential.
		f("/boot/loader/entries/"+strings.TrimSpace(oldMachineID)+"-5.14.0.conf", "title RHEL\nlinux /vmlinuz-5.14.0\noptions root=/dev/vda3 ro systemd.machine_id="+strings.TrimSpace(oldMachineID)+"\n"),
		f("/etc/credstore/system.machine_id", oldMachineID),
		f("/etc/selinux/config", "SELINUX=enforcing\nSELINUXTYPE=targeted\n"),
		f("/usr/lib/systemd/system/sshd-keygen@.service", "[Service]\nExecStart=/usr/libexec/openssh/sshd-keygen %i\n"),
		f("/etc/sysconfig/network-scripts/ifcfg-eth0", "DEVICE=eth0\nHWADDR=52:54:00:12:34:56\nUUID=5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03\nBOOTPROTO=dhcp\nDHCP_HOSTNAME=template-01\nONBOOT=yes\n"),
		f("/etc/sysconfig/network-scripts/ifcfg-lo", "DEVICE=lo\nUUID=keep-me\n"),
		f("/etc/sysconfig/network", "NETWORKING=yes\nHOSTNAME=template-01\n"),
		fm("/etc/NetworkManager/system-connections/eth0.nmconnection", "[connection]\nid=eth0\nuuid=5fb06bd0-0bb0-7ffb-45f1-d6edd65f3e03\ntype=ethernet\n\n[ethernet]\nmac-address=52:54:00:12:34:56\ncloned-mac-address=stable\n\n[ipv4]\nmethod=auto\n", 0o600),
		f("/etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection", "[connection]\nid=cloud-init eth0\n"),
		fm("/var/lib/NetworkManager/secret_key", "KEY", 0o600),
		f("/var/lib/NetworkManager/timestamps", "[timestamps]\n"),
		f("/var/lib/NetworkManager/internal-5fb06bd0-eth0.lease", "LEASE"),
		f("/var/lib/NetworkManager/NetworkManager.state", "[main]\nNetworkingEnabled=true\n"),
		f("/var/lib/dhclient/dhclient--eth0.lease", "LEASE"),
		f("/etc/udev/rules.d/70-persistent-net.rules", "SUBSYSTEM==\"net\", ATTR{address}==\"52:54:00:12:34:56\", NAME=\"eth0\"\n"),
		fm("/etc/krb5.keytab", "KEYTAB", 0o600),
		f("/etc/ipa/default.conf", "[global]\n"),
		f("/var/lib/sss/db/cache_example.ldb", "LDB"),
		f("/etc/pki/entitlement/123.pem", "PEM"),
		f("/etc/pki/consumer/cert.pem", "PEM"),
		f("/var/lib/yum/uuid", "uuid"),
		f("/var/cache/dnf/baseos-1234/packages/x.rpm", "RPM"),
		f("/var/cache/dnf/expired_repos.json", "[]"),
		f("/root/anaconda-ks.cfg", "rootpw --iscrypted $6$x\n"),
		f("/var/log/messages", "template-01 systemd[1]: started\n"),
		f("/var/log/messages-20240101", "old"),
		f("/var/log/audit/audit.log", "type=LOGIN\n"),
		f("/var/log/anaconda/anaconda.log", "install"),
		f("/etc/lvm/devices/system.devices", "VERSION=1.1.1\nIDTYPE=sys_wwid IDNAME=naa.1234\n"),
		f("/var/spool/abrt/ccpp-2024-01-01/coredump", "CORE"),
		f("/etc/resolv.conf", "nameserver 192.0.2.53\n"),
	)
}

// suseNodes is a SUSE-like root: wicked, SUSEConnect, zypp, /etc/HOSTNAME.
func suseNodes() []node {
	return append(base("opensuse-leap"),
		l("/var/lib/dbus/machine-id", "/etc/machine-id"),
		f("/etc/HOSTNAME", "template-01\n"),
		f("/usr/lib/systemd/system/sshd.service", "[Service]\nExecStartPre=/usr/sbin/sshd-gen-keys-start\nExecStart=/usr/sbin/sshd -D\n"),
		f("/var/lib/wicked/duid.xml", "<duid/>"),
		f("/var/lib/wicked/iaid.xml", "<iaid/>"),
		f("/var/lib/wicked/lease-eth0-dhcp-ipv4.xml", "<lease/>"),
		f("/var/lib/wicked/keep.xml", "<other/>"),
		fm("/etc/zypp/credentials.d/SCCcredentials", "username=SCC_x\npassword=y\n", 0o600),
		f("/etc/SUSEConnect", "---\nurl: https://scc.suse.com\n"),
		f("/var/cache/zypp/packages/repo-oss/x.rpm", "RPM"),
		f("/var/cache/zypp/raw/repo-oss/repomd.xml", "XML"),
		f("/var/lib/wtmpdb/wtmp.db", "SQLITE"),
		f("/var/lib/lastlog/lastlog2.db", "SQLITE"),
		f("/var/log/zypper.log", "zypper"),
		f("/boot/efi/loader/random-seed", "SEED"),
		f("/etc/resolv.conf", "nameserver 192.0.2.53\n"),
		f("/etc/credstore.encrypted/db-password", "ENC"),
	)
}

// fixtures are the synthetic roots that golden plans and suites use.
var fixtures = []struct {
	name  string
	nodes func() []node
}{
	{"debian", debianNodes},
	{"debian-nocloud", debianNoCloudNodes},
	{"rhel", rhelNodes},
	{"suse", suseNodes},
}

// scratchDir is a fresh temporary directory, on tmpfs (/dev/shm) when
// there is one: the suites build and seal hundreds of small trees, and a
// disk-backed TMPDIR makes every file creation and syncfs slow.
func scratchDir(t testing.TB) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "sealtest-"); err == nil {
			t.Cleanup(func() {
				filepath.WalkDir(dir, func(p string, de iofs.DirEntry, err error) error {
					if err == nil && de.IsDir() {
						os.Chmod(p, 0o755)
					}
					return nil
				})
				os.RemoveAll(dir)
			})
			return dir
		}
	}
	return t.TempDir()
}

// newRoot builds nodes in a fresh scratch dir and opens it confined.
func newRoot(t testing.TB, nodes []node) (string, *fs.Confined) {
	t.Helper()
	dir := scratchDir(t)
	build(t, dir, nodes)
	return dir, openRoot(t, dir)
}

func openRoot(t testing.TB, dir string) *fs.Confined {
	t.Helper()
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// allOps is every operation: the suites exercise opt-in ones too.
func allOps(t testing.TB) []Operation {
	ops, err := Select(All, "all")
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// fakeLive records live calls; it never touches the system.
type fakeLive struct{ calls []string }

func (l *fakeLive) StopUnit(ctx context.Context, name string) error {
	l.calls = append(l.calls, "stop "+name)
	return nil
}
func (l *fakeLive) RelinquishJournal(ctx context.Context) error {
	l.calls = append(l.calls, "relinquish")
	return nil
}
func (l *fakeLive) RunHook(ctx context.Context, p string) error {
	l.calls = append(l.calls, "hook "+p)
	return nil
}

// applyAll plans and applies ops on root and returns both.
func applyAll(t testing.TB, root *fs.Confined, ops []Operation, o Options) (Plan, []Result) {
	t.Helper()
	plan := MakePlan(context.Background(), root, ops, o)
	x := &Executor{Root: root}
	return plan, x.Apply(context.Background(), plan.Actions)
}

// hashTree returns a digest of everything under dir: names, kinds, modes,
// owners, sizes, contents, link targets, and mtimes when withTimes.
func hashTree(t testing.TB, dir string, withTimes bool) string {
	t.Helper()
	h := sha256.New()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, de iofs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+" ERR "+err.Error())
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		sys := st.Sys().(*syscall.Stat_t)
		rel, _ := filepath.Rel(dir, p)
		line := fmt.Sprintf("%s %v %d:%d %d", rel, st.Mode(), sys.Uid, sys.Gid, st.Size())
		if withTimes {
			line += fmt.Sprintf(" %d %d", st.ModTime().UnixNano(), sys.Ino)
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			line += " -> " + tgt
		case st.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				line += " unreadable"
			} else {
				s := sha256.Sum256(b)
				line += " " + hex.EncodeToString(s[:8])
			}
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	io.WriteString(h, strings.Join(lines, "\n"))
	return hex.EncodeToString(h.Sum(nil))
}

func isRoot() bool { return os.Geteuid() == 0 }

// machineIDMode is 0444, as systemd creates the file, for root; others
// could not open such a file for truncation at all.
func machineIDMode() os.FileMode {
	if isRoot() {
		return 0o444
	}
	return 0o644
}
