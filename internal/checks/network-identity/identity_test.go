package networkidentity

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/testenv"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func fixture(t *testing.T, name string) *fs.Root {
	t.Helper()
	return openRoot(t, filepath.Join("testdata/roots", name))
}

func TestReadNetworkConfigFixtures(t *testing.T) {
	tests := []struct {
		root     string
		dhcp     []string // codes of JudgeDHCPIdentity
		bindings []string // "kind mac at-suffix name"
		problems []string
		check    func(t *testing.T, c NetworkConfig, fs []runner.Finding)
	}{
		{root: "netplan-cloudinit", dhcp: []string{"warn identity-dhcp-client-id"},
			bindings: []string{"netplan match: macaddress 52:54:00:12:34:56 50-cloud-init.yaml:11 enp1s0"},
			check: func(t *testing.T, _ NetworkConfig, fs []runner.Finding) {
				if !strings.Contains(fs[0].Message, "netplan ethernets enp1s0 (") || !strings.Contains(fs[0].Message, "50-cloud-init.yaml:9) uses DHCP without `dhcp-identifier: mac`") ||
					!strings.Contains(fs[0].Remediation, "dhcp-identifier: mac") {
					t.Errorf("finding = %+v", fs[0])
				}
			}},
		{root: "netplan-mac-identifier", dhcp: []string{"pass identity-dhcp-ok"},
			check: func(t *testing.T, _ NetworkConfig, fs []runner.Finding) {
				if fs[0].Message != "2 DHCP configuration(s) identify the client by MAC address" {
					t.Errorf("message %q", fs[0].Message)
				}
			}},
		{root: "netplan-invalid", dhcp: []string{"warn identity-dhcp-client-id"},
			problems: []string{"50-cloud-init.yaml:8: invalid YAML"},
			check: func(t *testing.T, c NetworkConfig, fs []runner.Finding) {
				if !strings.Contains(fs[0].Message, "enp2s0") {
					t.Errorf("the valid file was not judged: %+v", fs)
				}
			}},
		{root: "networkd", dhcp: []string{"warn identity-dhcp-client-id", "warn identity-dhcp-client-id"},
			bindings: []string{"systemd-networkd [Match] MACAddress= 52:54:00:12:34:56 20-wired.network:2 "},
			check: func(t *testing.T, c NetworkConfig, fs []runner.Finding) {
				if !c.NetplanRendered || len(c.Networkd) != 1 {
					t.Errorf("netplan output not skipped: %+v", c.Networkd)
				}
				if !strings.Contains(fs[0].Remediation, "ClientIdentifier=mac") || !strings.Contains(fs[1].Message, "DHCPv6") {
					t.Errorf("findings = %+v", fs)
				}
			}},
		{root: "networkd-linklayer", dhcp: []string{"pass identity-dhcp-ok"}},
		{root: "ifcfg-rhel", dhcp: []string{"pass identity-dhcp-ok"},
			bindings: []string{"ifcfg HWADDR 52:54:00:12:34:56 ifcfg-eth0:6 eth0"}},
		{root: "nm-keyfile", dhcp: []string{"warn identity-dhcp-client-id"},
			bindings: []string{"NetworkManager mac-address 52:54:00:12:34:56 cloud-init-eth0.nmconnection:13 cloud-init eth0"},
			check: func(t *testing.T, _ NetworkConfig, fs []runner.Finding) {
				// A fixture root is an image: the fix edits its keyfile
				// (nmcli would change the host's NetworkManager).
				if !strings.Contains(fs[0].Remediation, "set `dhcp-client-id=mac` under [ipv4] in /etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection in the image") {
					t.Errorf("remediation %q", fs[0].Remediation)
				}
				c := ReadNetworkConfig(fixture(t, "nm-keyfile"))
				c.Live = true
				fs = JudgeDHCPIdentity(c)
				assertConventions(t, fs, Codes)
				if !strings.Contains(fs[0].Remediation, `nmcli connection modify 'cloud-init eth0' ipv4.dhcp-client-id mac`) {
					t.Errorf("live remediation %q", fs[0].Remediation)
				}
			}},
		{root: "udev-persistent", dhcp: []string{"pass identity-dhcp-ok"},
			bindings: []string{"udev 70-persistent-net.rules 52:54:00:12:34:56 70-persistent-net.rules:5 eth0"}},
	}
	for _, tc := range tests {
		t.Run(tc.root, func(t *testing.T) {
			c := ReadNetworkConfig(fixture(t, tc.root))
			var got []string
			for _, b := range c.Bindings {
				got = append(got, b.Kind+" "+b.MAC.String()+" "+filepath.Base(b.At)+" "+b.Name)
			}
			if !slices.Equal(got, tc.bindings) {
				t.Errorf("bindings = %q, want %q", got, tc.bindings)
			}
			var probs []string
			for _, p := range c.Problems {
				probs = append(probs, filepath.Base(p.String()))
			}
			if len(probs) != len(tc.problems) || len(probs) > 0 && !strings.HasPrefix(probs[0], tc.problems[0]) {
				t.Errorf("problems = %v, want %v", probs, tc.problems)
			}
			fs := JudgeDHCPIdentity(c)
			assertConventions(t, fs, Codes)
			if g := codesOf(fs); !slices.Equal(g, tc.dhcp) {
				t.Fatalf("dhcp findings %v, want %v\n%+v", g, tc.dhcp, fs)
			}
			if tc.check != nil {
				tc.check(t, c, fs)
			}
		})
	}
}

func TestJudgeConfigFiles(t *testing.T) {
	c := ReadNetworkConfig(fixture(t, "netplan-invalid"))
	c.Unreadable = []string{"/etc/NetworkManager/system-connections/x.nmconnection: permission denied"}
	fs := JudgeConfigFiles(c)
	assertConventions(t, fs, Codes)
	if got := codesOf(fs); !slices.Equal(got, []string{"error identity-config-unreadable", "warn identity-config-invalid"}) {
		t.Fatalf("got %v", got)
	}
	if !strings.HasSuffix(fs[1].Message, "/etc/netplan/50-cloud-init.yaml:8: invalid YAML: did not find expected key") {
		t.Errorf("message %q", fs[1].Message)
	}
}

func TestReadNetworkConfigUnreadable(t *testing.T) {
	testenv.RequireUnprivileged(t, "root reads every file")
	root := writeRoot(t, map[string]string{"/etc/NetworkManager/system-connections/a.nmconnection": "[ipv4]\nmethod=auto\n"})
	if err := os.Chmod(filepath.Join(root.Dir(), "etc/NetworkManager/system-connections/a.nmconnection"), 0); err != nil {
		t.Fatal(err)
	}
	c := ReadNetworkConfig(root)
	if len(c.Unreadable) != 1 || !strings.Contains(c.Unreadable[0], "permission denied") {
		t.Errorf("unreadable = %v", c.Unreadable)
	}
}

func TestNetplanRendererAndOverrides(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"/lib/netplan/00-default.yaml": "network:\n  renderer: NetworkManager\n  ethernets:\n    eth9:\n      dhcp4: true\n",
		"/etc/netplan/00-default.yaml": "network:\n  ethernets:\n    eth0:\n      dhcp4: true\n", // replaces the /lib file
		"/run/netplan/50-nm.yaml":      "network:\n  renderer: NetworkManager\n  ethernets:\n    eth1:\n      dhcp4: true\n",
		"/etc/netplan/60-eth2.yaml":    "network:\n  ethernets:\n    eth2:\n      renderer: networkd\n      dhcp4: true\n",
	})
	fs := JudgeDHCPIdentity(ReadNetworkConfig(root))
	// The last network-level renderer (NetworkManager) applies to eth0 and
	// eth1; eth2 overrides it per device. eth9's file is replaced.
	if got := codesOf(fs); !slices.Equal(got, []string{"warn identity-dhcp-client-id"}) || !strings.Contains(fs[0].Message, "eth2") {
		t.Errorf("got %+v", fs)
	}
}

func TestJudgeMachineID(t *testing.T) {
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := func(content string, mode os.FileMode) identity.CloneEvidence {
		return identity.CloneEvidence{MachineIDRaw: []byte(content), MachineID: strings.TrimSpace(content), MachineIDKind: identity.Classify([]byte(content)),
			MachineIDFound: true, MachineIDMode: mode, MachineIDTimes: identity.FileTimes{Mod: mt, Change: mt}}
	}
	valid := "0123456789abcdef0123456789abcdef\n"
	withDBus := ev("", 0o444)
	withDBus.DBusMachineID = "fedcba9876543210fedcba9876543210"
	roMissing := identity.CloneEvidence{Root: identity.RootModeOf([]identity.Cmdline{{Source: "/boot/grub/grub.cfg:3", Args: "root=/dev/vda1 ro"}})}
	rwMissing := identity.CloneEvidence{Root: identity.RootModeOf([]identity.Cmdline{{Source: "/etc/kernel/cmdline", Args: "root=/dev/vda1 rw"}})}
	tests := []struct {
		name string
		ev   identity.CloneEvidence
		live bool
		want []string
	}{
		{"valid", ev(valid, 0o444), true, []string{"pass identity-machine-id-ok"}},
		{"valid, upper case, no newline", ev("0123456789ABCDEF0123456789ABCDEF", 0o444), true, []string{"pass identity-machine-id-ok"}},
		{"empty on a booted system", ev("", 0o444), true, []string{"fail identity-machine-id-unset"}},
		{"uninitialized on a booted system", ev("uninitialized\n", 0o444), true, []string{"fail identity-machine-id-unset"}},
		{"missing on a booted system", identity.CloneEvidence{}, true, []string{"fail identity-machine-id-unset"}},
		{"empty in a sealed image", ev("", 0o444), false, []string{"pass identity-machine-id-ok"}},
		// machine-id(5): the empty file is the sealed form whatever its mode.
		{"empty, mode 0644, in a sealed image", ev("", 0o644), false, []string{"pass identity-machine-id-ok"}},
		{"empty, mode 0400, in a sealed image", ev("", 0o400), false, []string{"pass identity-machine-id-ok"}},
		{"uninitialized in an image", ev("uninitialized\n", 0o444), false, []string{"pass identity-machine-id-ok"}},
		{"world-writable: a warning, never more", ev("", 0o666), false, []string{"warn identity-machine-id-mode", "pass identity-machine-id-ok"}},
		{"empty, but systemd takes the D-Bus ID", withDBus, false, []string{"fail identity-machine-id-dbus-fallback"}},
		{"missing on a read-only root", roMissing, false, []string{"fail identity-machine-id-missing-read-only"}},
		{"missing on a read-write root", rwMissing, false, []string{"pass identity-machine-id-ok"}},
		// No kernel command line in the image: the kernel's default,
		// read-only (guestcheck passed this before the rule was one).
		{"missing, no boot configuration", identity.CloneEvidence{Root: identity.RootModeOf(nil)}, false, []string{"fail identity-machine-id-missing-read-only"}},
		{"garbage in an image: systemd replaces it", ev("not-a-machine-id\n", 0o444), false, []string{"warn identity-machine-id-invalid"}},
		{"garbage on a booted system", ev("not-a-machine-id\n", 0o444), true, []string{"fail identity-machine-id-invalid"}},
		{"two newlines: systemd replaces it", ev(valid+"\n", 0o444), true, []string{"fail identity-machine-id-invalid"}},
		{"all zero: systemd keeps it", ev(strings.Repeat("0", 32)+"\n", 0o444), false, []string{"fail identity-machine-id-invalid"}},
		{"unreadable", identity.CloneEvidence{MachineIDFound: true, MachineIDErr: os.ErrPermission}, true, []string{"error identity-machine-id-unreadable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := JudgeMachineID(tc.ev, tc.live)
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Errorf("got %+v, want %v", fs, tc.want)
			}
		})
	}
	fs := JudgeMachineID(roMissing, false)
	if !strings.Contains(fs[0].Message, "grub.cfg:3") {
		t.Errorf("the read-only finding does not say which file decided: %q", fs[0].Message)
	}
}

// cloneRoot writes a guest with cloud-init state and sets the mtimes the
// clone judgement depends on. Change times cannot be set, so the root is
// read with the mtimes standing for both.
func cloneRoot(t *testing.T, machineID time.Time, iid, prev string, iidTime time.Time, sem map[string]time.Time, procStat string) *fs.Root {
	t.Helper()
	files := map[string]string{
		"/etc/machine-id":                          "0123456789abcdef0123456789abcdef\n",
		"/var/lib/cloud/data/instance-id":          iid + "\n",
		"/var/lib/cloud/data/previous-instance-id": prev + "\n",
	}
	if procStat != "" {
		files["/proc/stat"] = procStat
	}
	for dir, tm := range sem {
		files["/var/lib/cloud/instances/"+dir+"/sem/config_scripts_user"] = tm.Format(time.RFC3339)
	}
	root := writeRoot(t, files)
	chtime := func(p string, tm time.Time) {
		if err := os.Chtimes(filepath.Join(root.Dir(), p), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	chtime("etc/machine-id", machineID)
	chtime("var/lib/cloud/data/instance-id", iidTime)
	for dir, tm := range sem {
		chtime("var/lib/cloud/instances/"+dir+"/sem/config_scripts_user", tm)
	}
	return root
}

// mtimeOnly reads file times with the mtime standing for the ctime, which
// a test cannot set.
func mtimeOnly(root *fs.Root, p string) (identity.FileTimes, error) {
	t, err := identity.LstatTimes(root, p)
	return identity.FileTimes{Mod: t.Mod}, err
}

func TestJudgeClone(t *testing.T) {
	boot := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	stat := "cpu  1 2 3\nbtime " + strconv.FormatInt(boot.Unix(), 10) + "\nprocesses 10\n"
	old := boot.Add(-90 * 24 * time.Hour)
	tests := []struct {
		name string
		root func(t *testing.T) *fs.Root
		live bool
		want []string
		ev   string // the evidence named, for a failure
	}{
		{"clone kept its machine-id (this boot)", func(t *testing.T) *fs.Root {
			return cloneRoot(t, old, "i-new", "i-old", boot.Add(20*time.Second), map[string]time.Time{"i-new": boot.Add(30 * time.Second), "i-old": old.Add(time.Minute)}, stat)
		}, true, []string{"fail identity-clone-kept-machine-id"}, EvFirstBoot},
		// The case of the issue: the template booted two minutes before
		// the clone. No margin lets it pass.
		{"clone booted 2 minutes after the template", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(-2*time.Minute), "i-new", "i-new", boot.Add(20*time.Second),
				map[string]time.Time{"i-new": boot.Add(30 * time.Second), "i-old": boot.Add(-time.Minute)}, stat)
		}, true, []string{"fail identity-clone-kept-machine-id"}, EvFirstBoot},
		{"the same clone on its next boot: the template's instance ran after the machine-id", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(-2*time.Hour-2*time.Minute), "i-new", "i-new", boot,
				map[string]time.Time{"i-new": boot.Add(-2*time.Hour + 30*time.Second), "i-old": boot.Add(-2*time.Hour - time.Minute)}, stat)
		}, true, []string{"fail identity-clone-kept-machine-id"}, EvOtherInstance},
		// virt-sysprep'd image with a fixed machine-id: one instance only.
		{"fixed machine-id baked into the image, first boot", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(-3*time.Minute), "i-new", "NO_PREVIOUS_INSTANCE_ID", boot.Add(20*time.Second), map[string]time.Time{"i-new": boot.Add(30 * time.Second)}, stat)
		}, true, []string{"fail identity-clone-kept-machine-id"}, EvFirstBoot},
		{"clone with a regenerated machine-id (this boot)", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(time.Second), "i-new", "i-old", boot.Add(20*time.Second), map[string]time.Time{"i-new": boot.Add(30 * time.Second), "i-old": old}, stat)
		}, true, []string{"pass identity-instance-ok"}, ""},
		{"clone detected on a later boot from the old instance directory", func(t *testing.T) *fs.Root {
			return cloneRoot(t, old, "i-new", "i-new", boot, map[string]time.Time{"i-new": boot.Add(-48 * time.Hour), "i-old": old.Add(time.Minute)}, stat)
		}, true, []string{"fail identity-clone-kept-machine-id"}, EvOtherInstance},
		{"later boot of a properly regenerated clone", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(-48*time.Hour-time.Minute), "i-new", "i-new", boot, map[string]time.Time{"i-new": boot.Add(-48 * time.Hour), "i-old": old}, stat)
		}, true, []string{"pass identity-instance-ok"}, ""},
		{"later boot of an instance whose machine-id is from its first boot", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(-48*time.Hour-time.Minute), "i-1", "i-1", boot, map[string]time.Time{"i-1": boot.Add(-48 * time.Hour)}, stat)
		}, true, []string{"pass identity-instance-ok"}, ""},
		// A loaded host: systemd wrote the machine-id early in the first
		// boot and cloud-init reached its semaphores 25 minutes later.
		{"slow first boot of a fresh instance", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(3*time.Second), "i-new", "NO_PREVIOUS_INSTANCE_ID", boot.Add(24*time.Minute), map[string]time.Time{"i-new": boot.Add(25 * time.Minute)}, stat)
		}, true, []string{"pass identity-instance-ok"}, ""},
		{"first boot of a fresh instance", func(t *testing.T) *fs.Root {
			return cloneRoot(t, boot.Add(time.Second), "i-new", "NO_PREVIOUS_INSTANCE_ID", boot.Add(20*time.Second), map[string]time.Time{"i-new": boot.Add(30 * time.Second)}, stat)
		}, true, []string{"pass identity-instance-ok"}, ""},
		{"image root: dated against the instance-id file", func(t *testing.T) *fs.Root {
			return cloneRoot(t, old, "i-new", "i-old", boot, nil, "")
		}, false, []string{"fail identity-clone-kept-machine-id"}, EvAge},
		{"no cloud-init state", func(t *testing.T) *fs.Root {
			return writeRoot(t, map[string]string{"/etc/machine-id": "0123456789abcdef0123456789abcdef\n"})
		}, true, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := JudgeClone(identity.ReadCloneEvidenceTimes(tc.root(t), tc.live, mtimeOnly))
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %v", fs, tc.want)
			}
			if len(fs) > 0 {
				assertConventions(t, fs, Codes)
			}
			if tc.ev != "" && !strings.HasPrefix(fs[0].Detail["evidence"], tc.ev) {
				t.Errorf("evidence %q, want %s first\n%+v", fs[0].Detail["evidence"], tc.ev, fs[0])
			}
		})
	}
}

func TestJudgeMACBindings(t *testing.T) {
	mac := func(s string) net.HardwareAddr { m, _ := net.ParseMAC(s); return m }
	bound := []MACBinding{{MAC: mac("52:54:00:12:34:56"), At: "/etc/netplan/50-cloud-init.yaml:11", Kind: "netplan match: macaddress", Name: "enp1s0"}}
	present := singleNIC()
	present.Links[1].MAC = mac("52:54:00:12:34:56")
	permanent := singleNIC()
	permanent.Links[1].PermMAC = mac("52:54:00:12:34:56")
	staleButAddressed := singleNIC()
	orphaned := singleNIC()
	orphaned.Addrs = orphaned.Addrs[:1]
	tests := []struct {
		name string
		bs   []MACBinding
		snap netstate.Snapshot
		want []string
	}{
		{"no bindings", nil, singleNIC(), []string{"pass identity-mac-bindings-ok"}},
		{"present", bound, present, []string{"pass identity-mac-bindings-ok"}},
		{"matches the permanent address", bound, permanent, []string{"pass identity-mac-bindings-ok"}},
		{"stale, NICs configured anyway", bound, staleButAddressed, []string{"warn identity-mac-binding-stale"}},
		{"stale and the NIC is left bare", bound, orphaned, []string{"fail identity-mac-binding-orphaned"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := JudgeMACBindings(tc.bs, netstate.NewTopology(tc.snap))
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %v", fs, tc.want)
			}
		})
	}
	fs := JudgeMACBindings(bound, netstate.NewTopology(orphaned))
	if fs[0].Message != "/etc/netplan/50-cloud-init.yaml:11: configuration for enp1s0 is bound to MAC 52:54:00:12:34:56, which no interface has, and eth0 has no address" ||
		fs[0].Detail["nics"] != "eth0 52:54:00:00:00:02" {
		t.Errorf("finding = %+v", fs[0])
	}
}

func TestRunIdentityImageRoot(t *testing.T) {
	// A template: every binding is the template's NIC.
	env := &runner.Env{Root: fixture(t, "netplan-cloudinit"), Live: false, Config: config.Default()}
	fs := RunIdentity(context.Background(), env)
	assertConventions(t, fs, Codes)
	want := []string{"pass identity-machine-id-ok", "pass identity-template-no-instance", "pass identity-dhcp-ok", "fail identity-template-mac-binding"}
	if got := codesOf(fs); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v\n%+v", got, want, fs)
	}
	if d := fs[3].Detail; d["mac"] != "52:54:00:12:34:56" || d["template"] == "" || !strings.HasSuffix(d["at"], "50-cloud-init.yaml:11") {
		t.Errorf("template binding = %+v", fs[3])
	}

	// A guest's image (its machine ID set): the bindings cannot be
	// compared with NICs offline.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata/roots", "netplan-cloudinit"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc/machine-id"), []byte("4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	fs = RunIdentity(context.Background(), &runner.Env{Root: openRoot(t, dir), Live: false, Config: config.Default()})
	assertConventions(t, fs, Codes)
	last := fs[len(fs)-1]
	if last.Code != CodeIDMACBindingSkipped.ID || last.Detail["binding_1"] == "" {
		t.Errorf("a guest's image: last finding %+v, want the skip with the bindings", last)
	}
	for _, f := range fs {
		if f.Code == CodeIDTemplateMACBinding.ID {
			t.Errorf("a guest's image judged as a template: %+v", f)
		}
	}
}

// TestNetworkIdentityTemplate judges sealed templates (and a guest) as
// roots: the missing-file rule with systemd, a link to /run, an instance
// left behind, and DHCP identifiers derived from the machine ID.
func TestNetworkIdentityTemplate(t *testing.T) {
	const (
		systemd = "/usr/lib/systemd/systemd"
		netplan = "/etc/netplan/50-cloud-init.yaml"
		dhcp4   = "network:\n  version: 2\n  ethernets:\n    enp1s0:\n      dhcp4: true\n"
	)
	tests := []struct {
		name  string
		files map[string]string
		want  []string
		tpl   bool
	}{
		{"missing, systemd, no command line", map[string]string{systemd: "", netplan: dhcp4},
			[]string{"fail identity-machine-id-missing-read-only", "pass identity-template-no-instance", "pass identity-dhcp-ok", "pass identity-mac-bindings-ok"}, true},
		{"missing, systemd, rw", map[string]string{systemd: "", "/etc/kernel/cmdline": "root=/dev/vda1 rw\n"},
			[]string{"pass identity-machine-id-ok", "pass identity-template-no-instance", "pass identity-dhcp-ok", "pass identity-mac-bindings-ok"}, true},
		{"link to /run", map[string]string{systemd: "", "/etc/machine-id": "->/run/machine-id"},
			[]string{"pass identity-machine-id-ok", "pass identity-template-no-instance", "pass identity-dhcp-ok", "pass identity-mac-bindings-ok"}, true},
		{"instance left", map[string]string{systemd: "", "/etc/machine-id": "", "/var/lib/cloud/data/instance-id": "i-1\n", "/var/lib/cloud/instances/i-1/sem/x": ""},
			[]string{"pass identity-machine-id-ok", "fail identity-template-instance", "pass identity-dhcp-ok", "pass identity-mac-bindings-ok"}, true},
		{"NetworkManager secret left", map[string]string{systemd: "", "/etc/machine-id": "", netplan: dhcp4, identity.NMSecretKeyPath: "k"},
			// The key is a leftover of its own (clones share stable-privacy
			// addresses), and the identifiers derived from it stay warnings.
			[]string{"pass identity-machine-id-ok", "pass identity-template-no-instance", "warn identity-dhcp-client-id", "fail identity-template-leftover", "pass identity-mac-bindings-ok"}, true},
		{"ID on the kernel command line", map[string]string{systemd: "", "/etc/machine-id": "",
			"/etc/kernel/cmdline": "root=/dev/vda1 rw systemd.machine_id=0123456789abcdef0123456789abcdef\n"},
			[]string{"pass identity-machine-id-ok", "fail identity-machine-id-leak", "pass identity-template-no-instance", "pass identity-dhcp-ok", "pass identity-mac-bindings-ok"}, true},
		{"guest", map[string]string{systemd: "", "/etc/machine-id": "0123456789abcdef0123456789abcdef\n", netplan: dhcp4},
			[]string{"pass identity-machine-id-ok", "warn identity-dhcp-client-id", "pass identity-mac-bindings-ok"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := RunIdentity(context.Background(), imageEnv(writeRoot(t, tc.files)))
			assertConventions(t, fs, Codes)
			if got := codesOf(fs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v\n%+v", got, tc.want, fs)
			}
			if got := fs[0].Detail["template"] != ""; got != tc.tpl {
				t.Errorf("template detail %v, want %v: %+v", got, tc.tpl, fs[0])
			}
		})
	}
}

// TestLstatTimesChange reads the ctime, which a chtimes to the past cannot
// move back: content written now with an old mtime is dated now.
func TestLstatTimesChange(t *testing.T) {
	root := writeRoot(t, map[string]string{"/etc/machine-id": "0123456789abcdef0123456789abcdef\n"})
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(root.Dir(), "etc/machine-id"), old, old); err != nil {
		t.Fatal(err)
	}
	ft, err := identity.LstatTimes(root, MachineIDPath)
	if err != nil {
		t.Fatal(err)
	}
	if !ft.Mod.Equal(old) || time.Since(ft.Change) > time.Hour || !ft.Written().Equal(ft.Change) {
		t.Errorf("times %+v: want mtime %s and a ctime of now", ft, old)
	}
}

// TestJudgeRawDUID: a DUIDRawData= in networkd.conf pins one DUID for
// every machine that runs a networkd DHCP client, whatever DUIDType=
// says: a warning on a guest, a failure in a sealed template (where the
// identifiers derived from the machine ID pass).
func TestJudgeRawDUID(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"/etc/systemd/networkd.conf.d/50-duid.conf": "[DHCPv6]\nDUIDType=link-layer\nDUIDRawData=00:01:52:54:00:12:34:56\n",
		"/etc/systemd/network/20-eth0.network":      "[Match]\nName=eth0\n\n[Network]\nDHCP=ipv6\n",
	})
	c := ReadNetworkConfig(root)
	fs := JudgeDHCPIdentity(c)
	assertConventions(t, fs, Codes)
	if got := codesOf(fs); !slices.Equal(got, []string{"warn identity-dhcp-client-id"}) ||
		!strings.Contains(fs[0].Message, "/etc/systemd/networkd.conf.d/50-duid.conf:3 pins DUIDRawData=") || !strings.Contains(fs[0].Remediation, "Remove `DUIDRawData=` from /etc/systemd/networkd.conf.d/50-duid.conf") {
		t.Errorf("guest: %+v", fs)
	}
	fs = JudgeDHCPIdentityIn(c, identity.CloneEvidence{State: identity.TemplateState{Is: true, Why: "sealed"}})
	if got := codesOf(fs); !slices.Equal(got, []string{"fail identity-dhcp-client-id"}) {
		t.Errorf("template: %v", got)
	}
	// Without a networkd DHCP client, nothing presents the DUID.
	quiet := writeRoot(t, map[string]string{"/etc/systemd/networkd.conf": "[DHCPv4]\nDUIDRawData=aa:bb\n"})
	for _, f := range JudgeDHCPIdentity(ReadNetworkConfig(quiet)) {
		if f.Status != runner.Pass && f.Status != runner.Skip {
			t.Errorf("no DHCP client: %+v", f)
		}
	}
}

// TestJudgeRawDUIDNoDUIDClient: a DHCPv4 client with a MAC client
// identifier presents no DUID, so a guest's DUIDRawData= shares nothing
// (guestid compares none either); a template still must not pin one, as
// sealprep's machine-id operation removes it.
func TestJudgeRawDUIDNoDUIDClient(t *testing.T) {
	root := writeRoot(t, map[string]string{
		"/etc/systemd/networkd.conf":           "[DHCPv4]\nDUIDRawData=aa:bb:cc\n",
		"/etc/systemd/network/20-eth0.network": "[Match]\nName=eth0\n\n[Network]\nDHCP=ipv4\n\n[DHCPv4]\nClientIdentifier=mac\n",
	})
	c := ReadNetworkConfig(root)
	for _, f := range JudgeDHCPIdentity(c) {
		if f.Code == CodeIDDHCPClientID.ID {
			t.Errorf("guest: %+v", f)
		}
	}
	fs := JudgeDHCPIdentityIn(c, identity.CloneEvidence{State: identity.TemplateState{Is: true, Why: "sealed"}})
	if got := codesOf(fs); !slices.Contains(got, "fail identity-dhcp-client-id") {
		t.Errorf("template: %v", got)
	}
}
