//go:build vmtest

package vm

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/nocloud"
)

// fleetDomain is one libvirt domain of the fleet scenario.
type fleetDomain struct {
	Name string
	// Base is the raw image the qcow2 overlay is backed by; empty for a
	// domain with no disk, which stays in its firmware ("No bootable
	// device"): a running domain at almost no CPU, for the cases in
	// which no agent answers.
	Base     string
	Channel  bool // the org.qemu.guest_agent.0 channel
	UserData string
	NIC      nic
	// Host is the guest's address on NIC's network: each guest its own,
	// since the survey cannot tell that every user network is private
	// to its guest (libvirt does not know the NIC), and equal addresses
	// on one network are a collision.
	Host int
	// FirmwareUUID, when set, is the SMBIOS system UUID the guest sees
	// instead of the domain's own <uuid>: libvirt refuses two domains of
	// one <uuid> and a <sysinfo> UUID that differs from it, so it goes
	// through <qemu:commandline> as -smbios type=1,uuid=, which QEMU
	// takes over libvirt's -uuid (its query-uuid then answers it).
	FirmwareUUID string
	// InstanceID is the NoCloud instance-id; empty for NAME-iid.
	InstanceID string
	// OneCPU boots the guest with one vCPU instead of two: every TCG
	// vCPU is a host thread, and seven guests' threads on two cores
	// made each guest's boot cost more CPU here (likely a vCPU spinning on a lock
	// the other one holds while it waits for a core).
	OneCPU bool

	dir       string
	agentSock string // the channel's socket, outside libvirtd's namespace
}

func (f *fleetDomain) console() string { return filepath.Join(f.dir, "console.log") }

// xml is the domain's definition: TCG, direct kernel boot from the
// image's vmlinuz and initrd like startVM, the overlay and the NoCloud
// seed as virtio disks, the console to a file, and the NIC as QEMU user
// networking with restrict=on through <qemu:commandline>: libvirt's
// <interface type='user'> has no restrict option. libvirt therefore does
// not know the NIC (the domain XML lists no interface).
func (f *fleetDomain) xml(img image) string {
	var dev, boot, cmdline strings.Builder
	boot.WriteString("<type arch='x86_64' machine='pc'>hvm</type>")
	mem, vcpu := 64, 2
	if f.OneCPU {
		vcpu = 1
	}
	if f.Base != "" {
		mem = 1024
		fmt.Fprintf(&boot, "<kernel>%s</kernel><initrd>%s</initrd><cmdline>root=/dev/vda rw console=ttyS0 panic=-1</cmdline>", img.Kernel, img.Initrd)
		fmt.Fprintf(&dev, `<disk type='file' device='disk'><driver name='qemu' type='qcow2'/><source file='%s'/><target dev='vda' bus='virtio'/></disk>
<disk type='file' device='disk'><driver name='qemu' type='raw'/><source file='%s'/><target dev='vdb' bus='virtio'/><readonly/></disk>
<rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>
`, filepath.Join(f.dir, "disk.qcow2"), filepath.Join(f.dir, "seed.iso"))
		n := f.NIC
		fmt.Fprintf(&cmdline, `<qemu:arg value='-netdev'/><qemu:arg value='user,id=gcnet0,restrict=on,ipv6=off,net=%s.0/24,host=%s.2,dns=%s.3,dhcpstart=%s.15'/>
<qemu:arg value='-device'/><qemu:arg value='virtio-net-pci,netdev=gcnet0,mac=%s,addr=0x%x'/>`, n.Net, n.Net, n.Net, n.Net, n.MAC, n.Slot)
		if f.FirmwareUUID != "" {
			fmt.Fprintf(&cmdline, "\n<qemu:arg value='-smbios'/><qemu:arg value='type=1,uuid=%s'/>", f.FirmwareUUID)
		}
	}
	fmt.Fprintf(&dev, "<serial type='file'><source path='%s'/><target port='0'/></serial>\n", f.console())
	if f.Channel {
		dev.WriteString("<channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>\n")
	}
	return fmt.Sprintf(`<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
<name>%s</name>
<memory unit='MiB'>%d</memory>
<vcpu>%d</vcpu>
<os>%s</os>
<on_reboot>destroy</on_reboot>
<devices>
<emulator>/usr/bin/qemu-system-x86_64</emulator>
<controller type='usb' model='none'/>
<memballoon model='none'/>
%s</devices>
<qemu:commandline>%s</qemu:commandline>
</domain>
`, f.Name, mem, vcpu, boot.String(), dev.String(), cmdline.String())
}

// create writes the domain's overlay and seed and starts it (a transient
// domain: it is gone once it stops).
func (f *fleetDomain) create(ctx context.Context, t *testing.T, l *libvirt.Libvirt, img image) {
	t.Helper()
	if f.Base != "" {
		os.Remove(filepath.Join(f.dir, "disk.qcow2"))
		if _, err := run(ctx, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", f.Base, filepath.Join(f.dir, "disk.qcow2")); err != nil {
			t.Fatal(err)
		}
		seed := filepath.Join(f.dir, "seed.iso")
		os.Remove(seed)
		iid := f.InstanceID
		if iid == "" {
			iid = f.Name + "-iid"
		}
		if err := nocloud.Write(seed, nocloud.Seed{InstanceID: iid, Hostname: f.Name, UserData: []byte(f.UserData),
			NetworkConfig: []byte(strings.Replace(networkConfig([]nic{f.NIC}), ".15/24", fmt.Sprintf(".%d/24", f.Host), 1))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.DomainCreateXML(f.xml(img), 0); err != nil {
		t.Fatalf("%s: create the domain: %v", f.Name, err)
	}
}

// waitConsole polls the domain's console file until re matches.
func (f *fleetDomain) waitConsole(ctx context.Context, re *regexp.Regexp) (string, error) {
	for {
		b, _ := os.ReadFile(f.console())
		if m := re.Find(b); m != nil {
			return string(m), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%s: console: no %q: %w", f.Name, re, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// boot waits for the domain's guestcheck.service summary. A guest kernel
// that oopses before cloud-init's first stage (TCG, now and then) is
// booted again once on a fresh overlay, as startVM does; but three guests
// at once on a loaded host are slow, not stuck, so only a console that
// says so, or that stopped growing for two minutes, is retried.
func (f *fleetDomain) boot(ctx context.Context, t *testing.T, l *libvirt.Libvirt, img image) error {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := firstStage(ctx, f.console(), nil)
		if err == nil {
			break
		}
		if attempt == 2 || ctx.Err() != nil {
			return fmt.Errorf("%s never reached cloud-init: %v", f.Name, err)
		}
		t.Logf("%s: %v, booting again; console tail:\n%s", f.Name, err, tailFile(f.console(), 15))
		if d, err := l.DomainLookupByName(f.Name); err == nil {
			l.DomainDestroy(d)
		}
		os.Rename(f.console(), f.console()+".attempt1")
		f.create(ctx, t, l, img)
	}
	sctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	line, err := f.waitConsole(sctx, summaryLine)
	if err != nil {
		return err
	}
	t.Logf("%s: %s after %s", f.Name, line, time.Since(start).Round(time.Second))
	return nil
}

// stuckConsole is a guest kernel that will not reach userspace.
var stuckConsole = regexp.MustCompile(`Kernel panic|Oops|BUG: |general protection fault`)

// firstStage waits for cloud-init's init-local on console, within
// bootTimeout, and gives up early on a kernel that died, a console
// silent for two minutes, or QEMU's exit (exited; nil when the caller
// does not see QEMU): a loaded host makes a TCG guest slow, not stuck.
func firstStage(ctx context.Context, console string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, bootTimeout)
	defer cancel()
	initLocal := regexp.MustCompile(`running 'init-local'`)
	size, grew := int64(-1), time.Now()
	for {
		b, _ := os.ReadFile(console)
		switch {
		case initLocal.Match(b):
			return nil
		case stuckConsole.Match(b):
			return fmt.Errorf("the guest kernel died: %s", stuckConsole.Find(b))
		}
		if int64(len(b)) != size {
			size, grew = int64(len(b)), time.Now()
		} else if time.Since(grew) > 2*time.Minute {
			return fmt.Errorf("the console has been silent for 2 min before cloud-init")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no cloud-init on the console: %w", ctx.Err())
		case <-exited:
			return fmt.Errorf("QEMU exited before cloud-init")
		case <-time.After(time.Second):
		}
	}
}

func tailFile(p string, n int) string {
	b, _ := os.ReadFile(p)
	return tail(strings.ReplaceAll(string(b), "\r", ""), n)
}

// agentChannel reads the domain's live XML: the agent channel's socket
// path (inside libvirtd's namespace) and its state.
func agentChannel(l *libvirt.Libvirt, name string) (path, state string, err error) {
	d, err := l.DomainLookupByName(name)
	if err != nil {
		return "", "", err
	}
	x, err := l.DomainGetXMLDesc(d, 0)
	if err != nil {
		return "", "", err
	}
	var dx struct {
		Channels []struct {
			Source struct {
				Path string `xml:"path,attr"`
			} `xml:"source"`
			Target struct {
				Name  string `xml:"name,attr"`
				State string `xml:"state,attr"`
			} `xml:"target"`
		} `xml:"devices>channel"`
	}
	if err := xml.Unmarshal([]byte(x), &dx); err != nil {
		return "", "", err
	}
	for _, c := range dx.Channels {
		if c.Target.Name == "org.qemu.guest_agent.0" {
			return c.Source.Path, c.Target.State, nil
		}
	}
	return "", "", nil
}

// fleetScenario is issue 24's host-side scenario, under a real libvirtd
// (startLibvirtd): two clones of the unsealed template (e.unsealed, whose
// machine-id and, with ssh_deletekeys: false, host keys they keep), one
// clone of the sealed template (its root partition, booted like the
// others through its kernel), a domain without the agent channel and one
// whose channel no agent ever opens (it has no disk); and issue 40's
// firmware twins (fleetuuid_test.go): two clones of the sealed template
// with one firmware UUID, which is also their instance-id. The host
// build of guestcheck surveys them through libvirt (--libvirt
// qemu:///system, inside libvirtd's namespace). Then libvirtd is
// stopped, the same QEMU processes keep running, the twins are read
// through their agents, and the same guests are surveyed again through
// --agent-socket on their channels' sockets: plain QEMU chardev sockets,
// no libvirt in the path. Five TCG boots serve both surveys.
func fleetScenario(ctx context.Context, t *testing.T, e *env) {
	start := time.Now()
	gc := filepath.Join(t.TempDir(), "guestcheck")
	if _, err := run(ctx, "go", "build", "-o", gc, "github.com/guestcheck/guestcheck/cmd/guestcheck"); err != nil {
		t.Fatal(err)
	}
	d := startLibvirtd(ctx, t)
	l := d.Connect(t)
	mk := func(name, base string, slot int) *fleetDomain {
		n := mgmtNIC
		n.MAC = fmt.Sprintf("52:54:00:00:05:%02x", slot)
		n.Slot = 0x10
		return &fleetDomain{Name: name, Base: base, Channel: true, NIC: n, Host: 20 + slot,
			// Clones of an unsealed template as a plain libvirt host
			// makes them (virt-clone, no sysprep) keep the host keys;
			// cloud-init would otherwise make new ones per instance.
			UserData: baseUserData + "ssh_deletekeys: false\n"}
	}
	doms := []*fleetDomain{
		mk("gc-fleet-tpl-a", e.unsealed, 1),
		mk("gc-fleet-tpl-b", e.unsealed, 2),
		mk("gc-fleet-sealed", e.sealedRoot, 3),
		{Name: "gc-fleet-nochannel"},
		{Name: "gc-fleet-noagent", Channel: true},
	}
	doms[2].UserData = baseUserData
	tw := newFirmwareTwins(t)
	doms = append(doms, tw.domains(mk, e.sealedRoot)...)
	n := bootFleet(ctx, t, d, l, e.img, doms)
	t.Logf("fleet: %d guests booted under libvirt in %s", n, time.Since(start).Round(time.Second))
	outDir := t.TempDir()

	t.Run("libvirt", func(t *testing.T) {
		sctx, cancel := step(ctx, fleetTimeout)
		defer cancel()
		args := withOutputs(outDir, "libvirt", "fleet", "--libvirt", "qemu:///system", "--format", "json", "--concurrency", "1")
		out := runFleet(t, d.Command(sctx, gc, args...))
		// With GUESTCHECK_VM_CAPTURE=DIR the survey is kept as
		// DIR/fleet-libvirt.json, the source of docs/fleet.md's real survey.
		if dir := os.Getenv("GUESTCHECK_VM_CAPTURE"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, "fleet-libvirt.json"), out, 0o644); err != nil {
				t.Errorf("capture: %v", err)
			}
		}
		expectFleet(t, out, map[string]string{
			"gc-fleet-nochannel": "no guest agent channel",
			"gc-fleet-noagent":   "agent not connected",
		}, e.template.machineID, tw.Names)
		tw.expectSurvey(t, "libvirt", readOutputs(t, outDir, "libvirt", out))
	})

	// Without libvirtd, the channels' sockets are QEMU's own again.
	d.Stop(t)
	t.Run("firmware-uuid", func(t *testing.T) { tw.expectGuests(ctx, t) })
	t.Run("agent-socket", func(t *testing.T) {
		args := withOutputs(outDir, "agent-socket", "fleet", "--format", "json", "--concurrency", "1")
		for _, f := range doms {
			p := f.agentSock
			if !f.Channel {
				p = filepath.Join(f.dir, "no-channel.sock") // what a host without the channel has: no socket
			}
			args = append(args, "--agent-socket", f.Name+"="+p)
		}
		sctx, cancel := step(ctx, fleetTimeout)
		defer cancel()
		out := runFleet(t, exec.CommandContext(sctx, gc, args...))
		expectFleet(t, out, map[string]string{"gc-fleet-nochannel": "no such socket", "gc-fleet-noagent": "not responding"}, e.template.machineID, tw.Names)
		tw.expectSurvey(t, "agent-socket", readOutputs(t, outDir, "agent-socket", out))
	})
	// Last: it searches what the steps before it kept.
	t.Run("no-raw-ids", tw.expectNoRawIDs)
	t.Logf("fleet scenario in %s", time.Since(start).Round(time.Second))
}

// bootFleet creates every domain, boots those with a disk at once, and
// waits for each agent channel to reach its state (connected, or for a
// domain without a disk disconnected); it records each channel's socket
// as seen from outside libvirtd's namespace. It returns how many booted.
func bootFleet(ctx context.Context, t *testing.T, d *libvirtd, l *libvirt.Libvirt, img image, doms []*fleetDomain) int {
	t.Helper()
	for _, f := range doms {
		f.dir = filepath.Join(d.Dir, "guests", f.Name)
		if err := os.MkdirAll(f.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f.create(ctx, t, l, img)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(doms))
	booted := 0
	for i, f := range doms {
		if f.Base == "" {
			continue
		}
		booted++
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = f.boot(ctx, t, l, img) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%v\nconsole tail:\n%s", err, tailFile(doms[i].console(), 40))
		}
	}
	for _, f := range doms {
		if cpu, err := d.QEMUCPU(f.Name); err == nil {
			t.Logf("%s: QEMU used %s of CPU to the boot's summary", f.Name, cpu.Round(time.Second))
		} else {
			t.Logf("%s: QEMU's CPU time: %v", f.Name, err)
		}
	}
	for _, f := range doms {
		if !f.Channel {
			continue
		}
		want := "connected"
		if f.Base == "" {
			want = "disconnected"
		}
		var p, st string
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var err error
			if p, st, err = agentChannel(l, f.Name); err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			if st == want || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if st != want {
			t.Fatalf("%s: agent channel %q, want %s", f.Name, st, want)
		}
		f.agentSock = d.Outside(p)
	}
	return booted
}

// fleetTimeout bounds one survey: guestcheck in five TCG guests one
// after the other (--concurrency 1: guestcheck reads the identity within
// 5 s, which three guests at once on a loaded two-core host can miss),
// and the agent that never answers (its connect deadline).
const fleetTimeout = 8 * time.Minute

// runFleet runs a survey with a deadline and returns its JSON. Its exit
// status follows guestcheck's (the clones fail), so only a run without
// output is an error.
func runFleet(t *testing.T, c *exec.Cmd) []byte {
	t.Helper()
	start := time.Now()
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	t.Logf("%s: %v after %s; stderr:\n%s", strings.Join(c.Args, " "), err, time.Since(start).Round(time.Millisecond), tail(stderr.String(), 20))
	if stdout.Len() == 0 {
		t.Fatalf("guestcheck fleet wrote no report")
	}
	return stdout.Bytes()
}

// fleetResult is the part of guestcheck fleet's JSON the scenario reads
// (schema/fleet-v1.schema.json).
type fleetResult struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Status        string `json:"status"`
	Collisions    []struct {
		Item    string   `json:"item"`
		Value   string   `json:"value"`
		Members []string `json:"members"`
		Fix     string   `json:"fix"`
	} `json:"collisions"`
	SourceErrors []struct {
		Source, Error string
	} `json:"source_errors"`
	VMs []struct {
		Name   string   `json:"name"`
		Source string   `json:"source"`
		Status string   `json:"status"`
		Reason string   `json:"reason"`
		Shares []string `json:"shares"`
		Report *Report  `json:"report"`
	} `json:"vms"`
}

// expectFleet asserts issue 24's scenario on a survey: the two clones of
// the unsealed template fail and share the machine-id and the SSH host
// keys (and nothing names another VM); the sealed clone has a report
// that does not fail and shares nothing; the firmware twins fail
// sharing exactly the machine-id and the instance-id, with the firmware
// fix (expectTwinVM); the domains no agent answers in are unknown with a
// reason (unknown: the reason must contain it).
func expectFleet(t *testing.T, out []byte, unknown map[string]string, machineID string, twins []string) {
	t.Helper()
	if machineID == "" {
		t.Errorf("the template's machine-id is unknown: the healthy guest's poweroff step did not record it")
	} else if i := bytes.Index(out, []byte(machineID)); i >= 0 {
		t.Errorf("the fleet report carries the template's machine-id in clear: ...%s...", out[max(0, i-300):min(len(out), i+64)])
	}
	var r fleetResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("fleet JSON: %v\n%s", err, tail(string(out), 20))
	}
	t.Logf("fleet: status %s, %d VMs, %d collisions, source errors %v", r.Status, len(r.VMs), len(r.Collisions), r.SourceErrors)
	if r.SchemaVersion != 1 || r.Tool != "guestcheck fleet" || len(r.SourceErrors) != 0 {
		t.Errorf("fleet report: schema %d, tool %q, source errors %v", r.SchemaVersion, r.Tool, r.SourceErrors)
	}
	clones := []string{"gc-fleet-tpl-a", "gc-fleet-tpl-b"}
	seen := map[string]bool{}
	for _, vm := range r.VMs {
		seen[vm.Name] = true
		t.Logf("  %s (%s): %s %s; shares %v", vm.Name, vm.Source, vm.Status, vm.Reason, vm.Shares)
		switch {
		case slices.Contains(clones, vm.Name):
			if vm.Status != "fail" || vm.Report == nil {
				t.Errorf("%s: %s (%s), want fail with its report", vm.Name, vm.Status, vm.Reason)
			} else {
				expect(t, vm.Report, "network-identity", "identity-clone-kept-machine-id", "fail")
				if id := vm.Report.Identity; id == nil || id.MachineIDHash == "" || len(id.Unread) > 0 {
					t.Errorf("%s: the report's identity is incomplete, nothing can be compared: %+v", vm.Name, id)
				}
			}
			for _, it := range []string{"machine-id", "ssh-host-key"} {
				if !slices.Contains(vm.Shares, it) {
					t.Errorf("%s shares %v, want %s among them", vm.Name, vm.Shares, it)
				}
			}
		case slices.Contains(twins, vm.Name):
			expectTwinVM(t, vm.Name, vm.Status, vm.Reason, vm.Shares, vm.Report)
		case vm.Name == "gc-fleet-sealed":
			if vm.Report == nil || vm.Status == "fail" || vm.Status == "unknown" || vm.Status == "error" || len(vm.Shares) > 0 {
				t.Errorf("%s: %s (%s), shares %v: want a report that does not fail and shares nothing", vm.Name, vm.Status, vm.Reason, vm.Shares)
			}
		default:
			want, ok := unknown[vm.Name]
			if !ok {
				t.Errorf("unexpected VM %s in the survey", vm.Name)
				continue
			}
			if vm.Status != "unknown" || vm.Reason == "" || !strings.Contains(vm.Reason, want) || vm.Report != nil {
				t.Errorf("%s: %s %q, want unknown with a reason containing %q", vm.Name, vm.Status, vm.Reason, want)
			}
		}
	}
	for _, n := range slices.Concat(clones, twins, []string{"gc-fleet-sealed", "gc-fleet-nochannel", "gc-fleet-noagent"}) {
		if !seen[n] {
			t.Errorf("the survey has no %s", n)
		}
	}
	items, twinItems := map[string]int{}, map[string]int{}
	for _, c := range r.Collisions {
		t.Logf("  shared %s %s by %v", c.Item, c.Value, c.Members)
		switch {
		case slices.Equal(c.Members, clones):
			items[c.Item]++
			if c.Fix == "" {
				t.Errorf("%s: no fix", c.Item)
			}
		case slices.Equal(c.Members, twins):
			twinItems[c.Item]++
			if c.Fix != guestid.FixFromFirmware {
				t.Errorf("the twins' %s has the fix %q, want the firmware UUID's (guestid.FixFromFirmware)", c.Item, c.Fix)
			}
		default:
			t.Errorf("%s %s is shared by %v, want only the two clones of the unsealed template or the two firmware twins", c.Item, c.Value, c.Members)
		}
	}
	if items["machine-id"] != 1 || items["ssh-host-key"] == 0 {
		t.Errorf("collisions by item %v, want the machine-id once and the SSH host keys", items)
	}
	if len(twinItems) != 2 || twinItems["machine-id"] != 1 || twinItems["instance-id"] != 1 {
		t.Errorf("the twins' collisions by item %v, want the machine-id and the instance-id once each", twinItems)
	}
	if r.Status == "pass" {
		t.Errorf("fleet status pass with clones sharing identity")
	}
}
