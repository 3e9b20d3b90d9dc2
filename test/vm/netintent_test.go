//go:build vmtest

package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// The network-stack guests stand for the distributions Harvester users
// run, built from Debian 13 packages that use the same stacks: an
// Ubuntu-like guest (cloud-init writes 50-cloud-init.yaml, netplan renders
// it for systemd-networkd, systemd-resolved), a RHEL-like guest
// (cloud-init renders NetworkManager keyfiles; qemu-ga reads a RHEL 9.4
// style allow-list from /etc/sysconfig/qemu-ga) and a Debian guest
// (ifupdown). One root filesystem with every stack installed; each stack's
// image differs only by a cloud.cfg.d drop-in choosing cloud-init's
// renderer and the services enabled or masked.
var (
	netSuite    = "trixie"
	netPackages = []string{
		"linux-image-cloud-amd64", "systemd-sysv", "udev", "dbus", "cloud-init", "qemu-guest-agent",
		"openssh-server", "iproute2", "isc-dhcp-client", "ifupdown", "netbase", "e2fsprogs", "sudo", "procps", "locales",
		"netplan.io", "network-manager", "systemd-resolved",
		// minbase leaves out systemd's Recommends; every cloud image has a
		// time daemon, and the time-sync check fails without one.
		"systemd-timesyncd",
	}
)

// netStack is one guest network stack and how its image is made from the
// common tree.
type netStack struct {
	Name string
	// Script runs with the tree as $1 after the common customize step.
	Script string
}

// RHEL 9.4 replaced qemu-ga's block-list with an allow-list in
// /etc/sysconfig/qemu-ga that leaves out guest-exec and guest-file-*.
const rhelQGAFilter = `FILTER_RPC_ARGS="--allow-rpcs=guest-sync-delimited,guest-sync,guest-ping,guest-get-osinfo,guest-info,guest-set-time,guest-get-time,guest-shutdown,guest-fsfreeze-status,guest-fsfreeze-freeze,guest-fsfreeze-freeze-list,guest-fsfreeze-thaw,guest-fstrim,guest-get-fsinfo,guest-network-get-interfaces,guest-get-vcpus,guest-get-memory-blocks,guest-get-memory-block-info,guest-get-host-name,guest-get-timezone,guest-get-users,guest-get-disks,guest-get-devices"`

var netStacks = []netStack{
	{Name: "ubuntu-like", Script: `set -eu
t=$1
printf 'system_info:\n  network:\n    renderers: [netplan]\n    activators: [netplan]\n' >"$t/etc/cloud/cloud.cfg.d/90-guestcheck-stack.cfg"
chroot "$t" systemctl enable systemd-networkd.service systemd-resolved.service
chroot "$t" systemctl mask networking.service NetworkManager.service NetworkManager-wait-online.service
ln -sf ../run/systemd/resolve/stub-resolv.conf "$t/etc/resolv.conf"
`},
	{Name: "rhel-like", Script: `set -eu
t=$1
printf 'system_info:\n  network:\n    renderers: [network-manager]\n    activators: [network-manager]\n' >"$t/etc/cloud/cloud.cfg.d/90-guestcheck-stack.cfg"
chroot "$t" systemctl enable NetworkManager.service
chroot "$t" systemctl mask networking.service systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service systemd-resolved.service
rm -f "$t/etc/resolv.conf"; printf 'nameserver 192.0.2.3\n' >"$t/etc/resolv.conf"
mkdir -p "$t/etc/sysconfig" "$t/etc/systemd/system/qemu-guest-agent.service.d"
printf '%s\n' '` + rhelQGAFilter + `' >"$t/etc/sysconfig/qemu-ga"
printf '[Service]\nEnvironmentFile=-/etc/sysconfig/qemu-ga\nExecStart=\nExecStart=/usr/sbin/qemu-ga --method=virtio-serial --path=/dev/virtio-ports/org.qemu.guest_agent.0 $FILTER_RPC_ARGS\n' \
	>"$t/etc/systemd/system/qemu-guest-agent.service.d/50-sysconfig.conf"
`},
	{Name: "debian", Script: `set -eu
t=$1
printf 'system_info:\n  network:\n    renderers: [eni]\n    activators: [eni]\n' >"$t/etc/cloud/cloud.cfg.d/90-guestcheck-stack.cfg"
chroot "$t" systemctl enable networking.service
chroot "$t" systemctl mask NetworkManager.service NetworkManager-wait-online.service systemd-networkd.service systemd-networkd.socket systemd-networkd-wait-online.service systemd-resolved.service
rm -f "$t/etc/resolv.conf"; printf 'nameserver 192.0.2.3\n' >"$t/etc/resolv.conf"
`},
}

// netRootfs runs mmdebstrap for the network-stack guests unless its
// tarball is cached.
func netRootfs(ctx context.Context, t *testing.T, cache string) (string, string) {
	netMirrors := debianSources(t, netSuite)
	args := append([]string{"--variant=minbase", "--include=" + strings.Join(netPackages, ","), netSuite}, netMirrors...)
	key := cacheKey(args...)
	tarball := filepath.Join(cache, "netrootfs-"+key+".tar")
	if st, err := os.Stat(tarball); err == nil && st.Size() > 0 {
		t.Logf("netimage: cached root filesystem %s", tarball)
		return tarball, key
	}
	start := time.Now()
	tmp := filepath.Join(cache, "netrootfs-"+key+".tmp.tar")
	full := append(append(append([]string{}, args[:3]...), tmp), netMirrors...)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	if _, err := run(ctx, "mmdebstrap", full...); err != nil {
		os.Remove(tmp)
		t.Fatalf("netimage: %v", err)
	}
	if err := os.Rename(tmp, tarball); err != nil {
		t.Fatal(err)
	}
	t.Logf("netimage: root filesystem (%s, %d packages) built in %s", netSuite, len(netPackages), time.Since(start).Round(time.Second))
	return tarball, key
}

// netImages returns one image per stack (or per stack named in only),
// built from one root filesystem and cached by its inputs.
func netImages(ctx context.Context, t *testing.T, cache, deb string, only ...string) map[string]image {
	t.Helper()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tarball, rootKey := netRootfs(ctx, t, cache)
	debSum, err := fileSHA256(deb)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]image{}
	for _, s := range netStacks {
		if len(only) > 0 && !slices.Contains(only, s.Name) {
			continue
		}
		key := cacheKey(rootKey, debSum, customize, s.Script, "size=3G label=rootfs")
		dir := filepath.Join(cache, "netimage-"+s.Name+"-"+key)
		img := image{Root: filepath.Join(dir, "root.img"), Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img")}
		out[s.Name] = img
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			t.Logf("netimage: cached %s", dir)
			continue
		}
		start := time.Now()
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		tree := filepath.Join(tmp, "tree")
		if err := os.MkdirAll(tree, 0o755); err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		steps := [][]string{
			{"tar", "-C", tree, "--numeric-owner", "-xpf", tarball},
			// systemd-resolved's package made /etc/resolv.conf a link to
			// its stub, which customize cannot write through; each stack
			// sets its own.
			{"rm", "-f", filepath.Join(tree, "etc/resolv.conf")},
			{"sh", "-c", customize, "customize", tree, deb},
			{"sh", "-c", s.Script, s.Name, tree},
		}
		for _, st := range steps {
			if _, err := run(sctx, st[0], st[1:]...); err != nil {
				cancel()
				t.Fatalf("netimage %s: %v", s.Name, err)
			}
		}
		for _, c := range []struct{ glob, dst string }{{"vmlinuz-*", "vmlinuz"}, {"initrd.img-*", "initrd.img"}} {
			m, _ := filepath.Glob(filepath.Join(tree, "boot", c.glob))
			if len(m) == 0 {
				cancel()
				t.Fatalf("netimage %s: no /boot/%s", s.Name, c.glob)
			}
			sort.Strings(m)
			if _, err := run(sctx, "cp", m[len(m)-1], filepath.Join(tmp, c.dst)); err != nil {
				cancel()
				t.Fatal(err)
			}
		}
		root := filepath.Join(tmp, "root.img")
		for _, st := range [][]string{{"truncate", "-s", "3G", root}, {"mkfs.ext4", "-q", "-F", "-L", "rootfs", "-d", tree, root}} {
			if _, err := run(sctx, st[0], st[1:]...); err != nil {
				cancel()
				t.Fatalf("netimage %s: %v", s.Name, err)
			}
		}
		cancel()
		os.RemoveAll(tree)
		if err := os.WriteFile(filepath.Join(tmp, "done"), []byte(filepath.Base(deb)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Keep one image per stack.
		old, _ := filepath.Glob(filepath.Join(cache, "netimage-"+s.Name+"-*"))
		for _, o := range old {
			if o != tmp {
				os.RemoveAll(o)
			}
		}
		if err := os.Rename(tmp, dir); err != nil {
			t.Fatal(err)
		}
		t.Logf("netimage %s: built in %s", s.Name, time.Since(start).Round(time.Second))
	}
	return out
}

// consoleDump is a unit the guests' user-data installs: once
// guestcheck.service has run, it writes the JSON and text reports to the
// serial console, gzip'd and base64'd line by line. The RHEL-like guest's
// agent refuses guest-file-* and guest-exec, so the console is the one
// channel every guest has.
const consoleDump = `[Unit]
Description=guestcheck report on the serial console (VM tests)
After=guestcheck.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c '{ echo; gzip -9c /run/guestcheck/report.json | base64 -w 76 | sed "s/^/GCR /"; gzip -9c /run/guestcheck/report.txt | base64 -w 76 | sed "s/^/GCT /"; echo GCREPORT-END; } >/dev/ttyS0'
`

func netUserData(extraRuncmd ...string) string {
	var b strings.Builder
	// ssh_pwauth: false, as the article's user-data has: sshd's own
	// default allows passwords, which the ssh check's baseline refuses.
	b.WriteString("#cloud-config\nmanage_etc_hosts: true\nssh_pwauth: false\nwrite_files:\n  - path: /etc/systemd/system/gcdump.service\n    content: |\n")
	for _, l := range strings.Split(strings.TrimSpace(consoleDump), "\n") {
		b.WriteString("      " + l + "\n")
	}
	b.WriteString("runcmd:\n")
	for _, c := range extraRuncmd {
		fmt.Fprintf(&b, "  - [sh, -c, %q]\n", c)
	}
	b.WriteString("  - [systemctl, start, --no-block, gcdump.service]\n")
	return b.String()
}

// dumpLine is one line of the dump. Not anchored at the line's start:
// agetty's terminal probes on the same console can precede it.
var dumpLine = regexp.MustCompile(`(?m)(GCR|GCT) ([A-Za-z0-9+/=]+)\r?$`)

// consoleReport waits for the dump on the console and decodes it.
func consoleReport(ctx context.Context, t *testing.T, v *VM) (*Report, string) {
	t.Helper()
	sctx, cancel := step(ctx, bootTimeout)
	defer cancel()
	if _, err := v.WaitConsole(sctx, regexp.MustCompile(`GCREPORT-END`)); err != nil {
		t.Fatalf("%s: report dump on the console: %v", v.spec.Name, err)
	}
	b, _ := os.ReadFile(v.console)
	var js, txt strings.Builder
	for _, m := range dumpLine.FindAllSubmatch(b, -1) {
		if string(m[1]) == "GCR" {
			js.Write(m[2])
		} else {
			txt.Write(m[2])
		}
	}
	dec := func(s string) []byte {
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: console dump: %v", v.spec.Name, err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: console dump: %v", v.spec.Name, err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: console dump: %v", v.spec.Name, err)
		}
		return out
	}
	text := string(dec(txt.String()))
	v.lastReport = text
	r, err := reportv1.Decode(dec(js.String()))
	if err != nil {
		t.Fatalf("%s: report: %v", v.spec.Name, err)
	}
	return &r, text
}

// netConfig returns the NoCloud network-config of a scenario for a stack,
// v2 for the Ubuntu-like guest (as Harvester templates for Ubuntu carry)
// and v1 for the others. Healthy: the management NIC static (slirp's DHCP
// under restrict=on sends no router), and on the Ubuntu-like guest a
// second NIC on DHCP without `dhcp-identifier: mac` (netplan's default,
// which Harvester's restore documentation warns about). Broken: the
// second NIC declared as eth1, which the VM does not have (its NIC is
// ens4); a second address on the management NIC; a nameserver the
// resolver will not use; a VLAN on the management NIC.
func netConfig(stack string, broken bool) string {
	m, s := mgmtNIC, secondNIC
	if stack == "ubuntu-like" {
		var b strings.Builder
		fmt.Fprintf(&b, "version: 2\nethernets:\n  ens%d:\n    match: {macaddress: %q}\n    set-name: ens%d\n", m.Slot, m.MAC, m.Slot)
		if broken {
			fmt.Fprintf(&b, "    addresses: [%s.15/24, %s.25/24]\n    nameservers: {addresses: [%s.3, %s.53], search: [example.test]}\n", m.Net, m.Net, m.Net, m.Net)
		} else {
			fmt.Fprintf(&b, "    addresses: [%s.15/24]\n    nameservers: {addresses: [%s.3]}\n", m.Net, m.Net)
		}
		if broken {
			// The management NIC's declared default route has metric 200,
			// as a DHCP route on the second NIC would undercut.
			fmt.Fprintf(&b, "    routes: [{to: default, via: %s.2, metric: %d}]\n", m.Net, m.Metric)
		} else {
			fmt.Fprintf(&b, "    routes: [{to: default, via: %s.2}]\n", m.Net)
		}
		if broken {
			b.WriteString("  eth1: {dhcp4: true}\nvlans:\n  ens3.100: {id: 100, link: ens3, addresses: [203.0.113.15/24]}\n")
		} else {
			fmt.Fprintf(&b, "  ens%d:\n    match: {macaddress: %q}\n    set-name: ens%d\n    dhcp4: true\n    dhcp4-overrides: {use-routes: false}\n", s.Slot, s.MAC, s.Slot)
		}
		return b.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nconfig:\n  - type: physical\n    name: ens%d\n    mac_address: %q\n    subnets:\n", m.Slot, m.MAC)
	if broken {
		fmt.Fprintf(&b, "      - {type: static, address: %s.15/24, gateway: %s.2, metric: %d, dns_nameservers: [%s.3, %s.53], dns_search: [example.test]}\n      - {type: static, address: %s.25/24}\n", m.Net, m.Net, m.Metric, m.Net, m.Net, m.Net)
		b.WriteString("  - type: physical\n    name: eth1\n    subnets: [{type: dhcp}]\n")
		fmt.Fprintf(&b, "  - type: vlan\n    name: ens%d.100\n    vlan_link: ens%d\n    vlan_id: 100\n    subnets: [{type: static, address: 203.0.113.15/24}]\n", m.Slot, m.Slot)
	} else {
		fmt.Fprintf(&b, "      - {type: static, address: %s.15/24, gateway: %s.2, dns_nameservers: [%s.3]}\n", m.Net, m.Net, m.Net)
	}
	return b.String()
}

// brokenRuncmd applies the live half of the broken scenario, after the
// stack applied the configuration: the second address replaced by
// another, the second NIC brought up by hand with a default route that
// wins (the takeover), a static resolv.conf without the declared
// nameserver, and the VLAN recreated with another ID.
var brokenRuncmd = []string{
	"ip addr add 192.0.2.26/24 dev ens3 && ip addr del 192.0.2.25/24 dev ens3",
	// NetworkManager manages the undeclared NIC with an automatic DHCP
	// profile and would remove a route it did not add: let go of it first.
	"if command -v nmcli >/dev/null && systemctl -q is-active NetworkManager; then nmcli device set ens4 managed no; sleep 1; fi; ip link set ens4 up; ip addr add 198.51.100.15/24 dev ens4 || true; ip route add default via 198.51.100.2 dev ens4 metric 50",
	"rm -f /etc/resolv.conf; printf 'nameserver 192.0.2.3\\n' >/etc/resolv.conf",
	"if command -v nmcli >/dev/null && systemctl -q is-active NetworkManager; then c=$(nmcli -g NAME,DEVICE connection show --active | awk -F: '$2==\"ens3.100\"{print $1}'); [ -z \"$c\" ] || { nmcli connection modify \"$c\" connection.autoconnect no; nmcli connection down \"$c\"; }; fi; ip link del ens3.100 2>/dev/null; ip link add link ens3 name ens3.100 type vlan id 200 && ip link set ens3.100 up && ip addr add 203.0.113.15/24 dev ens3.100",
}

// TestVMNetIntent boots, for each network stack, the healthy guest and the
// broken one, two guests at a time, from one image per stack.
func TestVMNetIntent(t *testing.T) {
	longScenario(t)
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root: run `make vm-test` as root")
	}
	for _, tool := range []string{"mmdebstrap", "qemu-system-x86_64", "qemu-img", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("missing %s: apt-get install qemu-system-x86 qemu-utils mmdebstrap e2fsprogs", tool)
		}
	}
	ctx, cancel := testContext(t)
	defer cancel()
	start := time.Now()
	// A subtest of its own, so that `-run TestVMNetIntent/images` builds
	// the images alone (while other guests hold the CPU).
	var imgs map[string]image
	t.Run("images", func(t *testing.T) {
		imgs = netImages(ctx, t, cacheDir(), debPath(t))
		t.Logf("netintent: images ready after %s", time.Since(start).Round(time.Second))
	})
	if t.Failed() {
		return
	}
	if imgs == nil {
		imgs = netImages(ctx, t, cacheDir(), debPath(t)) // cached by then
	}
	slots := make(chan struct{}, 2)
	var mu sync.Mutex
	times := map[string]time.Duration{}
	t.Run("stacks", func(t *testing.T) {
		for _, s := range netStacks {
			for _, broken := range []bool{false, true} {
				name := s.Name + "/healthy"
				if broken {
					name = s.Name + "/broken"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					slots <- struct{}{}
					defer func() { <-slots }()
					st := time.Now()
					netGuest(ctx, t, s.Name, imgs[s.Name], broken)
					mu.Lock()
					times[name] = time.Since(st)
					mu.Unlock()
				})
			}
		}
	})
	var names []string
	for n := range times {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("netintent: %s took %s", n, times[n].Round(time.Second))
	}
	t.Logf("netintent: matrix took %s in all", time.Since(start).Round(time.Second))
}

func netGuest(ctx context.Context, t *testing.T, stack string, img image, broken bool) {
	kind := "healthy"
	var runcmd []string
	nics := []nic{mgmtNIC}
	if broken || stack == "ubuntu-like" {
		nics = append(nics, secondNIC)
	}
	if broken {
		kind, runcmd = "broken", brokenRuncmd
	}
	name := "net-" + stack + "-" + kind
	v := startVM(ctx, t, spec{
		Name: name, Base: img.Root, Image: img,
		InstanceID: "gc-" + name + "-1", Hostname: "gc-" + name,
		UserData:      netUserData(runcmd...),
		NetworkConfig: netConfig(stack, broken),
		NICs:          nics,
	})
	r, text := consoleReport(ctx, t, v)
	t.Logf("%s: /run/guestcheck/report.txt:\n%s", name, text)
	if dir := os.Getenv("GUESTCHECK_VM_REPORTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, name+".txt"), []byte(text), 0o644)
	}
	nc, err := checkOf(r, "network-config")
	if err != nil {
		t.Fatal(err)
	}
	if !broken {
		expect(t, r, "network-config", "netconfig-interface-ok", "pass")
		if f := nc.Finding("netconfig-interface-ok"); f != nil && !strings.Contains(f.Detail["source"], "cloud-init") {
			t.Errorf("network-config source %q, want cloud-init's", f.Detail["source"])
		}
		expect(t, r, "routes", "routes-default-ok", "pass", "warn")
		switch stack {
		case "ubuntu-like":
			// netplan's default DHCP identifier is the machine-id's DUID.
			expect(t, r, "network-identity", "identity-dhcp-client-id", "warn")
		case "rhel-like":
			expect(t, r, "qemu-guest-agent", "qga-exec-blocked", "pass", "warn", "skip")
		}
		for _, c := range r.Checks {
			if c.Status == "fail" || c.Status == "error" {
				t.Errorf("%s: %s", name, &c)
			}
		}
		return
	}
	expect(t, r, "network-config", "", "fail")
	wantFinding := func(code string, fragments ...string) {
		t.Helper()
		for _, f := range nc.Findings {
			if f.Code != code {
				continue
			}
			ok := true
			for _, s := range fragments {
				ok = ok && strings.Contains(f.Message, s)
			}
			if ok {
				return
			}
		}
		t.Errorf("%s: network-config has no %s finding with %q:\n  %s", name, code, fragments, nc)
	}
	wantFinding("netconfig-interface-missing", "eth1", fmt.Sprintf("ens%d (%s): use that name", secondNIC.Slot, secondNIC.MAC))
	wantFinding("netconfig-address-missing", "192.0.2.25/24", "192.0.2.26/24")
	wantFinding("netconfig-nameserver-missing", "192.0.2.53")
	wantFinding("netconfig-vlan-mismatch", "ens3.100", "VLAN ID is 200, declared 100")
	wantFinding("netconfig-gateway-not-default", "192.0.2.2 on ens3", "198.51.100.2 dev ens4")
	expect(t, r, "routes", "routes-default-takeover", "fail")
}
