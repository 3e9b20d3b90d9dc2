//go:build vmtest

package vm

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	hostimage "github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/host/nocloud"
	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// nic is one user-network NIC. Every user network uses a documentation
// range and restrict=on: the guest reaches nothing but QEMU's own virtual
// host, and IPv6 (whose slirp default is fec0::/64) is off.
type nic struct {
	Net    string // "192.0.2" for 192.0.2.0/24
	MAC    string
	Slot   int // PCI slot: the guest names the NIC ens<Slot> (slot-based naming)
	Metric int // of its default route
}

// networkConfig is the NoCloud network-config (v1) for nics. Under
// restrict=on, slirp's DHCP server leaves out the router and DNS options
// (observed: a lease with an address and no default route), so every NIC
// is configured statically, the way cloud-init renders a cloud's metadata:
// .15 on its network, a default route via .2 (slirp's host) with the NIC's
// metric, nameserver .3 (slirp's DNS).
//
// The metric sits on a subnet route, not on the subnet: cloud-init's v1
// schema has `metric` only on routes, and cloud-init 25.1 (Debian 13)
// rejects a subnet `metric` ("network-config-v1 failed schema
// validation!") and ends degraded. Checked with cloud-init 25.1.4's
// `cloud-init schema -t network-config`, which passes this and rejects the
// old form; 22.4 and 25.1 both render it for ifupdown as
// `post-up route add default gw GW metric N`, which needs net-tools (in the
// image's package list).
func networkConfig(nics []nic) string {
	var b strings.Builder
	b.WriteString("version: 1\nconfig:\n")
	for i, n := range nics {
		// Only the first NIC names a nameserver: the image's static
		// resolv.conf holds the management network's (ifupdown without
		// resolvconf applies no dns-nameservers line), and network-config
		// rightly fails a declared nameserver the resolver does not use.
		dns := ""
		if i == 0 {
			dns = fmt.Sprintf("\n        dns_nameservers: [%s.3]", n.Net)
		}
		fmt.Fprintf(&b, `  - type: physical
    name: ens%d
    mac_address: "%s"
    subnets:
      - type: static
        address: %s.15/24%s
        routes:
          - {network: 0.0.0.0/0, gateway: %s.2, metric: %d}
`, n.Slot, n.MAC, n.Net, dns, n.Net, n.Metric)
	}
	return b.String()
}

var (
	mgmtNIC   = nic{Net: "192.0.2", MAC: "52:54:00:00:02:03", Slot: 3, Metric: 200}
	secondNIC = nic{Net: "198.51.100", MAC: "52:54:00:00:02:04", Slot: 4, Metric: 100}
)

// prefix is the NIC's network as prove takes it.
func (n nic) prefix() netip.Prefix { return netip.MustParsePrefix(n.Net + ".0/24") }

// spec describes one guest.
type spec struct {
	Name  string
	Base  string // raw image the qcow2 overlay is backed by
	Image image  // kernel and initrd
	// InstanceID and Hostname are the seed's meta-data.
	InstanceID, Hostname string
	UserData             string
	NetworkConfig        string // NoCloud network-config; default networkConfig(NICs)
	// NICs: the first is the guest's own (slot 3, as prove's clones).
	NICs     []nic
	DataDisk bool // a 64 MiB ext4 disk as /dev/vdb (the seed is then /dev/vdc)
	// NoAgentChannel leaves out the org.qemu.guest_agent.0 port (the
	// virtio-serial controller stays): no agent can answer, so the test
	// reads the guest through its console and ExportDisk.
	NoAgentChannel bool
	// ExportDisk is an empty 16 MiB raw disk, /dev/disk/by-id/virtio-gcexport
	// in the guest, that the guest writes a tar to (see exportUserData).
	ExportDisk bool
	// Hotplug boots the guest with spare CPU and DIMM slots and a second
	// QMP monitor for the test (hotplug_test.go).
	Hotplug bool
}

// VM is a guest booted the way sealprep prove boots its clones, through
// prove's own launcher (prove.Start: restricted user networks, the base
// passed as a vetted descriptor chain, QEMU confined to a dynamic uid and
// its seccomp sandbox) and a NoCloud seed from internal/host/nocloud;
// with its guest agent client (internal/host/qga) and serial console log.
type VM struct {
	t       *testing.T
	spec    spec
	dir     string
	Overlay string
	console string

	clone prove.Clone
	boot  prove.Boot // its Chain is the vetted base, open until cleanup
	jail  prove.Jail
	qemu  *prove.VM

	agent *qga.Client

	lastReport string // the last guestcheck report fetched, for failure output
}

// startVM creates the guest's overlay, seed and sockets and boots it. A
// guest kernel under TCG now and then oopses before userspace: a boot
// whose kernel died, whose console went silent or whose QEMU exited before
// cloud-init's first stage is retried on a fresh overlay; one that got
// there is never retried.
func startVM(ctx context.Context, t *testing.T, s spec) *VM {
	t.Helper()
	dir, err := os.MkdirTemp("", "gcvm-"+s.Name+"-")
	if err != nil {
		t.Fatal(err)
	}
	v := &VM{t: t, spec: s, dir: dir}
	t.Cleanup(v.cleanup)
	if err := v.prepare(ctx); err != nil {
		t.Fatal(err)
	}
	qemu, err := v.qemuProgram() // hotplug_test.go
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		if err := prove.CreateOverlay(ctx, "qemu-img", v.boot, v.Overlay, v.jail); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if v.qemu, err = prove.Start(ctx, qemu, v.clone, v.boot, v.devices(), v.jail); err != nil {
			t.Fatal(err)
		}
		err := firstStage(ctx, v.console, v.qemu.Exited()) // fleet_test.go
		if err == nil {
			t.Logf("%s: cloud-init init-local after %s (attempt %d)", s.Name, time.Since(start).Round(time.Second), attempt)
			break
		}
		if attempt == 3 || ctx.Err() != nil {
			t.Fatalf("%s: guest never reached cloud-init: %v", s.Name, err)
		}
		t.Logf("%s: guest never reached cloud-init (%v), retrying; console tail:\n%s", s.Name, err, v.ConsoleTail(15))
		v.qemu.Kill()
		os.Rename(v.console, fmt.Sprintf("%s.attempt%d", v.console, attempt))
		for _, p := range []string{v.Overlay, v.clone.QMP(), v.clone.QGA(), v.hotplugQMP()} {
			os.Remove(p)
		}
	}
	return v
}

// prepare vets the base (prove passes it to QEMU as descriptors), picks
// QEMU's user, stages the kernel and initrd for it in the guest's
// directory and writes the seed and the extra disks there as its own.
func (v *VM) prepare(ctx context.Context) error {
	s := v.spec
	if len(s.NICs) == 0 || s.NICs[0].Slot != 3 {
		return fmt.Errorf("%s: the first NIC is the guest's own, in slot 3", s.Name)
	}
	v.clone = prove.Clone{Name: s.Name, MAC: s.NICs[0].MAC, Net: s.NICs[0].prefix(), Dir: v.dir}
	v.Overlay, v.console = v.clone.Overlay(), v.clone.Console()
	chain, err := hostimage.OpenChain(ctx, "qemu-img", s.Base, hostimage.Policy{})
	if err != nil {
		return err
	}
	v.boot = prove.Boot{Firmware: prove.FirmwareKernel, Kernel: s.Image.Kernel, Initrd: s.Image.Initrd,
		Append: "root=/dev/vda rw console=ttyS0 panic=-1", Accel: prove.AccelTCG, MemoryMiB: 1024, CPUs: 2, Chain: chain}
	if v.jail, err = prove.NewJail(prove.AccelTCG, "/dev/kvm"); err != nil {
		return err
	}
	if err := prove.StageBoot(v.dir, &v.boot, v.jail); err != nil {
		return err
	}
	netcfg := s.NetworkConfig
	if netcfg == "" {
		netcfg = networkConfig(s.NICs)
	}
	seed := nocloud.Seed{InstanceID: s.InstanceID, Hostname: s.Hostname, UserData: []byte(s.UserData), NetworkConfig: []byte(netcfg)}
	if err := nocloud.Write(v.clone.Seed(), seed); err != nil {
		return fmt.Errorf("%s: seed: %w", s.Name, err)
	}
	if err := v.jail.Own(v.clone.Seed(), 0o600); err != nil {
		return err
	}
	return v.extraDisks(ctx)
}

// extraDisks creates the data and export disks as QEMU's user's.
func (v *VM) extraDisks(ctx context.Context) error {
	var cmds [][]string
	if v.spec.DataDisk {
		cmds = append(cmds, []string{"truncate", "-s", "64M", v.dataDisk()}, []string{"mkfs.ext4", "-q", "-F", "-L", "data", v.dataDisk()})
	}
	if v.spec.ExportDisk {
		cmds = append(cmds, []string{"truncate", "-s", "16M", v.exportDisk()})
	}
	for _, c := range cmds {
		if _, err := run(ctx, c[0], c[1:]...); err != nil {
			return err
		}
		if err := v.jail.Own(c[len(c)-1], 0o600); err != nil {
			return err
		}
	}
	return nil
}

// devices are what the guest has beyond a prove clone's.
func (v *VM) devices() prove.Devices {
	var d prove.Devices
	for _, n := range v.spec.NICs[1:] {
		d.NICs = append(d.NICs, prove.NIC{Net: n.prefix(), MAC: n.MAC, Slot: n.Slot})
	}
	if v.spec.DataDisk {
		d.Disks = append(d.Disks, prove.Disk{Path: v.dataDisk()})
	}
	if v.spec.ExportDisk {
		d.Disks = append(d.Disks, prove.Disk{Path: v.exportDisk(), Serial: "gcexport"})
	}
	d.NoAgentPort = v.spec.NoAgentChannel
	return d
}

// Event returns the first QMP event named name seen so far.
func (v *VM) Event(name string) (qmp.Event, bool) { return v.qemu.Event(name) }

// WaitExit waits for QEMU to exit by itself.
func (v *VM) WaitExit(ctx context.Context) error { return v.qemu.Wait(ctx) }

// WaitConsole polls the serial console log until re matches and returns
// the match. It gives up when QEMU exits or ctx ends.
func (v *VM) WaitConsole(ctx context.Context, re *regexp.Regexp) (string, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		b, _ := os.ReadFile(v.console)
		if m := re.Find(b); m != nil {
			return string(m), nil
		}
		select {
		case <-v.qemu.Exited():
			b, _ = os.ReadFile(v.console)
			if m := re.Find(b); m != nil {
				return string(m), nil
			}
			return "", fmt.Errorf("console: qemu exited (%v) before %q", v.qemu.Wait(ctx), re)
		case <-ctx.Done():
			return "", fmt.Errorf("console: no %q: %w", re, ctx.Err())
		case <-tick.C:
		}
	}
}

// ConsoleTail returns the last n lines of the serial console.
func (v *VM) ConsoleTail(n int) string {
	b, _ := os.ReadFile(v.console)
	return tail(strings.ReplaceAll(string(b), "\r", ""), n)
}

func (v *VM) exportDisk() string { return filepath.Join(v.dir, "export.img") }

func (v *VM) dataDisk() string { return filepath.Join(v.dir, "data.img") }

// Exported waits for the guest to power itself off after writing its
// export tar (exportUserData) and returns the tar's regular files by
// path, "./" removed.
func (v *VM) Exported(ctx context.Context) (map[string][]byte, error) {
	if err := v.WaitExit(ctx); err != nil {
		return nil, fmt.Errorf("%s: waiting for the guest to power off after its export: %w", v.spec.Name, err)
	}
	b, err := os.ReadFile(v.exportDisk())
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: export disk: %w (%d files read)", v.spec.Name, err, len(files))
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		c, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: export disk: %s: %w", v.spec.Name, h.Name, err)
		}
		files[strings.TrimPrefix(path.Clean(h.Name), "./")] = c
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: the export disk holds no files: the guest did not export", v.spec.Name)
	}
	return files, nil
}

// exportUserData is user-data for a guest no agent can reach: after
// guestcheck.service, a unit writes the identity capture (identityCapture)
// and guestcheck's boot report, as a tar, to the export disk, and powers
// the guest off. The scripts go through base64 so that YAML leaves them
// alone.
func exportUserData() string {
	unit := `[Unit]
Description=Write guestcheck's boot report to the export disk, then power off (guestcheck VM test)
After=guestcheck.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'GC_EXPORT_REPORT=1 sh /usr/local/sbin/gc-capture >/dev/disk/by-id/virtio-gcexport && sync && systemctl --no-block poweroff'
`
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return fmt.Sprintf(`write_files:
  - path: /usr/local/sbin/gc-capture
    encoding: b64
    content: %s
  - path: /etc/systemd/system/gc-export.service
    encoding: b64
    content: %s
runcmd:
  - systemctl daemon-reload
  - systemctl start --no-block gc-export.service
`, b64(identityCapture), b64(unit))
}

// Agent connects to the guest agent, retrying until it answers (qemu-ga
// starts late in boot and may be restarted).
func (v *VM) Agent(ctx context.Context) (*qga.Client, error) {
	if v.spec.NoAgentChannel {
		return nil, fmt.Errorf("%s: the guest has no agent channel", v.spec.Name)
	}
	if v.agent != nil {
		if err := v.agent.Ping(ctx); err == nil {
			return v.agent, nil
		}
		v.agent.Close()
		v.agent = nil
	}
	var last error
	for {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		c, err := qga.Dial(actx, "unix", v.clone.QGA())
		cancel()
		if err == nil {
			c.SetTimeout(60 * time.Second)
			v.agent = c
			return c, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: guest agent: %v (%w)", v.spec.Name, last, ctx.Err())
		case <-v.qemu.Exited():
			return nil, fmt.Errorf("%s: qemu exited: %v", v.spec.Name, v.qemu.Wait(ctx))
		case <-time.After(2 * time.Second):
		}
	}
}

// ExecResult is a finished guest-exec, its output as text.
type ExecResult struct {
	Exit           int
	Stdout, Stderr string
}

// maxGuestRead bounds one stream of a program's output and one file read
// from the guest: no single agent reply is longer (qga.MaxReplySize), so
// no output the harness could get before is refused now.
const maxGuestRead = qga.MaxReplySize

// Exec runs a program in the guest and waits for it, through the
// product's own qga.Run (guest-exec with an argument array, polled with
// backoff). A program killed by a signal, or whose output the agent cut
// at its limit, is an error; the result is returned with it.
func (v *VM) Exec(ctx context.Context, path string, args ...string) (ExecResult, error) {
	a, err := v.Agent(ctx)
	if err != nil {
		return ExecResult{}, err
	}
	r, err := qga.Run(ctx, a, path, args, maxGuestRead)
	if err != nil {
		return ExecResult{}, fmt.Errorf("guest-exec %s %v: %w", path, args, err)
	}
	res := ExecResult{Exit: r.Exit, Stdout: string(r.Stdout), Stderr: string(r.Stderr)}
	switch {
	case r.Signal != 0:
		return res, fmt.Errorf("%s %v: killed by signal %d", path, args, r.Signal)
	case r.Truncated:
		return res, fmt.Errorf("%s %v: the agent cut its output at its limit", path, args)
	}
	return res, nil
}

// ReadFile reads a guest file through the product's own qga.ReadFile
// (guest-file-open in mode "r", guest-file-read, guest-file-close).
func (v *VM) ReadFile(ctx context.Context, path string) ([]byte, error) {
	a, err := v.Agent(ctx)
	if err != nil {
		return nil, err
	}
	b, err := qga.ReadFile(ctx, a, path, maxGuestRead)
	if err != nil {
		return nil, fmt.Errorf("read in the guest: %w", err)
	}
	return b, nil
}

// Report fetches and decodes a guestcheck JSON report from the guest, and
// the text report next to it (when there is one) for failure output.
func (v *VM) Report(ctx context.Context, path string) (*Report, error) {
	b, err := v.ReadFile(ctx, path)
	if err != nil {
		return nil, err
	}
	v.lastReport = string(b)
	if txt, err := v.ReadFile(ctx, strings.TrimSuffix(path, ".json")+".txt"); err == nil {
		v.lastReport = string(txt)
	}
	r, err := reportv1.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// cleanup kills QEMU and, when the test failed, prints the console tail
// and the last guestcheck report; the guest's directory is kept then.
func (v *VM) cleanup() {
	if v.agent != nil {
		v.agent.Close()
	}
	if v.qemu != nil {
		v.qemu.Kill()
	}
	v.boot.Chain.Close()
	if v.t.Failed() {
		v.t.Logf("%s: console tail (%s):\n%s", v.spec.Name, v.console, v.ConsoleTail(40))
		if v.lastReport != "" {
			v.t.Logf("%s: last guestcheck report:\n%s", v.spec.Name, v.lastReport)
		} else {
			v.t.Logf("%s: no guestcheck report was fetched", v.spec.Name)
		}
		v.t.Logf("%s: files kept in %s", v.spec.Name, v.dir)
		return
	}
	os.RemoveAll(v.dir)
}

// The report types are guestcheck's own (reportv1), read with its one
// decoder, so that the scenarios assert on what guestcheck writes.
type (
	// Report is a guestcheck JSON report.
	Report = reportv1.Report
	// CheckResult is one check in a report.
	CheckResult = reportv1.Result
	// Finding is one finding of a check.
	Finding = reportv1.Finding
)

// checkOf returns the result of check id in r, or an error naming it.
func checkOf(r *Report, id string) (*CheckResult, error) {
	if c := r.Check(id); c != nil {
		return c, nil
	}
	return nil, errors.New("report has no check " + id)
}
