//go:build vmtest

package vm

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/prove"
)

// proveTimeout is the whole-run deadline of the runs that boot. Two TCG
// clones take 3 to 7 minutes on the 2-core machine; with a dozen other
// guests on it (load average 25) they took more than 12, and a run that
// passes ends when its clones are done, so the deadline costs nothing.
const proveTimeout = 20 * time.Minute

// keptKeysUserData is user-data whose cloud-init keeps the image's SSH
// host keys on a new instance (ssh_deletekeys: false, as images that pin
// their host keys ship it; see keepKeysUserData). Without it cloud-init's
// ssh module gives every new instance new keys, and clones of an unsealed
// Debian template share only their machine-id.
const keptKeysUserData = baseUserData + "ssh_deletekeys: false\n"

// proveUnsealed: two clones of the unsealed template (booted once, then
// powered off) keep its machine-id and, with keys kept, its host keys:
// prove fails (exit 1) naming both items, the clones and the template,
// with the fix; each clone boots and guestcheck fails it on
// network-identity (identity-clone-kept-machine-id: see noChannelClone for
// the finding itself), and nothing else but ssh (the template's keys are
// older than the instance); instance-ids, hostnames, MACs and addresses
// are distinct. No report holds the machine-id in clear.
func proveUnsealed(ctx context.Context, t *testing.T, e *env) {
	r := runProve(ctx, t, e, "unsealed", e.unsealed, keptKeysUserData, 2, proveTimeout,
		"--kernel", e.img.Kernel, "--initrd", e.img.Initrd, "--append", "root=LABEL=rootfs rw console=ttyS0 panic=-1")
	if r.exit != prove.ExitFailed || r.rep.Proven {
		t.Errorf("exit %d, proven %v; want 1 and not proven", r.exit, r.rep.Proven)
	}
	if r.rep.Firmware != prove.FirmwareKernel {
		t.Errorf("firmware %s, want kernel (--kernel)", r.rep.Firmware)
	}
	all := append(r.cloneNames(), prove.TemplateName)
	r.expectCollision(t, guestid.ItemMachineID, hashOf(t, e.template.machineID), all...)
	r.expectCollision(t, guestid.ItemHostKey, fingerprint(t, e.template.hostKey), all...)
	r.expectItems(t, prove.ItemShared, guestid.ItemMachineID, guestid.ItemHostKey)
	r.expectItems(t, prove.ItemDistinct, guestid.ItemInstanceID, guestid.ItemHostname, guestid.ItemMAC, guestid.ItemAddress)
	for _, c := range r.rep.Clones {
		if c.Boot != prove.BootUp || c.Verdict == nil || c.VerdictSource != prove.SourceAgent {
			t.Errorf("%s: boot %s, verdict %v from %q; want up, judged through the agent", c.Name, c.Boot, c.Verdict, c.VerdictSource)
			continue
		}
		if c.Verdict.Status != "FAIL" || !slices.ContainsFunc(c.Failing, func(f string) bool { return strings.HasPrefix(f, "network-identity: ") }) {
			t.Errorf("%s: guestcheck %s, failing %v; want FAIL with network-identity", c.Name, c.Verdict.Status, c.Failing)
		}
		for _, f := range c.Failing {
			if !strings.HasPrefix(f, "network-identity: ") && !strings.HasPrefix(f, "ssh: ") {
				t.Errorf("%s: a check that the kept identity does not explain fails: %s", c.Name, f)
			}
		}
	}
	for _, c := range r.rep.Clones {
		if !slices.ContainsFunc(c.Checks, func(k prove.CheckVerdict) bool { return k.ID == "network-identity" && k.Status == "fail" }) {
			t.Errorf("%s: the report's checks do not say network-identity failed: %+v", c.Name, c.Checks)
		}
	}
	r.noMachineID(t, e.template.machineID)
	r.expectJUnit(t, nil, []guestid.Item{guestid.ItemMachineID, guestid.ItemHostKey})
}

// proveSealed: the GPT template sealed by sealprep apply --image, booted
// through its own GRUB under OVMF (prove chooses UEFI: an ESP and no BIOS
// boot code), proves clean: exit 0, every clone up and passed by
// guestcheck through the agent, every item distinct, the template's
// record read. Each clone runs cloud-init as its own new instance under
// meta-data's hostname, with host keys of its own that the seal's record
// does not name; rebooted (--reboot), each keeps every item and runs no
// first-boot work again.
func proveSealed(ctx context.Context, t *testing.T, e *env) {
	// runProve's --keep directory for this run: its QEMUs' files are
	// there, and they run as a dynamic user under seccomp.
	w := watchQEMU(filepath.Join(e.scratch, "prove-sealed", "keep"))
	// --reboot under UEFI: OVMF under TCG now and then stalls on the
	// warm reset, which prove answers with a cold boot (its notes say so).
	r := runProve(ctx, t, e, "sealed", e.sealed, baseUserData, 2, proveTimeout, "--reboot")
	w.check(t)
	if r.exit != prove.ExitProven || !r.rep.Proven {
		t.Errorf("exit %d, proven %v; want 0: a template sealed by sealprep proves clean", r.exit, r.rep.Proven)
	}
	if r.rep.Firmware != prove.FirmwareUEFI || !strings.Contains(r.rep.FirmwareReason, "EFI system partition") {
		t.Errorf("firmware %s (%s), want uefi for a disk with only an ESP", r.rep.Firmware, r.rep.FirmwareReason)
	}
	tp := r.rep.Template
	if !tp.Read || !tp.Record || tp.Identity == nil || tp.Identity.MachineIDHash != "" {
		t.Errorf("template: read %v, record %v, identity %+v; want the sealed template read, with its record and no machine-id", tp.Read, tp.Record, tp.Identity)
	}
	r.expectItems(t, prove.ItemDistinct, guestid.ItemMachineID, guestid.ItemHostKey, guestid.ItemInstanceID, guestid.ItemHostname, guestid.ItemMAC, guestid.ItemAddress)
	if len(r.rep.Collisions) != 0 || len(r.rep.Failures) != 0 {
		t.Errorf("collisions %+v, failures %+v; want none", r.rep.Collisions, r.rep.Failures)
	}
	for i, c := range r.rep.Clones {
		if c.Boot != prove.BootUp || c.Verdict == nil || c.VerdictSource != prove.SourceAgent {
			t.Errorf("%s: boot %s, verdict %v from %q; want up, judged through the agent", c.Name, c.Boot, c.Verdict, c.VerdictSource)
			continue
		}
		if s := c.Verdict.Status; (s != "PASS" && s != "WARN") || len(c.Failing) > 0 {
			t.Errorf("%s: guestcheck %s, failing %v", c.Name, s, c.Failing)
		}
		id := c.Identity
		if id == nil {
			t.Errorf("%s: no identity", c.Name)
			continue
		}
		if want := fmt.Sprintf("prove-%d", i+1); id.Hostname != want {
			t.Errorf("%s: hostname %q, want meta-data's %s", c.Name, id.Hostname, want)
		}
		if !regexp.MustCompile(fmt.Sprintf(`^prove-[0-9a-f]+-%d$`, i+1)).MatchString(id.InstanceID) {
			t.Errorf("%s: instance-id %q, not the one its seed gave", c.Name, id.InstanceID)
		}
		if len(id.HostKeys) == 0 {
			t.Errorf("%s: no host keys read", c.Name)
		}
		for _, k := range id.HostKeys {
			if _, ok := e.sealRecord.KeyByFingerprint(k.Fingerprint); ok {
				t.Errorf("%s: host key %s is one the seal removed", c.Name, k.Fingerprint)
			}
		}
	}
	uuids := map[string]bool{}
	for _, c := range r.rep.Clones {
		uuids[c.FirmwareUUID] = true
		if c.BootTime == nil || c.BootTime.ToVerdictMS <= 0 {
			t.Errorf("%s: no time to the verdict: %+v", c.Name, c.BootTime)
		}
		if rb := c.Reboot; rb == nil || rb.Boot != prove.BootUp || len(rb.Changed) != 0 || !rb.FirstBootRead {
			t.Errorf("%s's reboot: %+v; want up, nothing changed, first-boot work compared", c.Name, rb)
		} else {
			t.Logf("%s rebooted through %s; notes %q", c.Name, rb.How, rb.Notes)
		}
	}
	if len(uuids) != len(r.rep.Clones) || r.rep.FirmwareUUID != prove.UUIDPerClone {
		t.Errorf("firmware UUIDs %v (%s): want one of its own per clone", uuids, r.rep.FirmwareUUID)
	}
	r.noMachineID(t, e.template.machineID)
	r.expectJUnit(t, nil, nil)
}

// proveRegenKeys: the sealed root with a unit that regenerates the SSH
// host keys at every boot (a template mistake a single boot never shows),
// booted once and rebooted (--reboot) with a boot budget below any TCG
// boot: prove fails the reboot naming the host keys and the fix, and the
// first boot naming the budget and the slowest units guestcheck measured
// on its critical chain. One clone, two boots, for both.
func proveRegenKeys(ctx context.Context, t *testing.T, e *env) {
	if e.regenKeys == "" {
		t.Fatal("no regen-keys template: the templates step did not make it")
	}
	r := runProve(ctx, t, e, "regen-keys", e.regenKeys, baseUserData, 1, proveTimeout,
		"--kernel", e.img.Kernel, "--initrd", e.img.Initrd, "--append", "root=LABEL=rootfs rw console=ttyS0 panic=-1",
		"--reboot", "--boot-budget", "20s")
	if r.exit != prove.ExitFailed {
		t.Errorf("exit %d, want 1", r.exit)
	}
	c := r.rep.Clones[0]
	if c.Reboot == nil || c.Reboot.Boot != prove.BootUp {
		t.Fatalf("clone-1: no second boot: %+v", c.Reboot)
	}
	if !slices.ContainsFunc(r.rep.Failures, func(f prove.Failure) bool {
		return f.Step == prove.StepReboot && f.Item == guestid.ItemHostKey && strings.Contains(f.Message, "SSH host keys changed across the reboot") &&
			strings.Contains(f.Fix, "per-boot unit")
	}) {
		t.Errorf("no reboot failure naming the host keys: %+v", r.rep.Failures)
	}
	for _, ch := range c.Reboot.Changed {
		if ch.Item != string(guestid.ItemHostKey) {
			t.Errorf("clone-1: %s changed across the reboot too (%s, then %s): only the host keys should", ch.Item, ch.Before, ch.After)
		}
	}
	if c.BootTime == nil || c.BootTime.ToVerdictMS < 20000 || c.BootTime.Slowest == "" {
		t.Fatalf("clone-1: boot time %+v: want over the 20 s budget (no TCG boot with cloud-init meets it; 1m did, 47 s on a quiet host), with guestcheck's slowest units", c.BootTime)
	}
	if !slices.ContainsFunc(r.rep.Failures, func(f prove.Failure) bool {
		return f.Clone == "clone-1" && f.Step == "" && strings.Contains(f.Message, "over the --boot-budget of 20s") &&
			strings.Contains(f.Message, "slowest units on the boot's critical chain: "+c.BootTime.Slowest)
	}) {
		t.Errorf("no failure of the boot budget naming the slowest units %q: %+v", c.BootTime.Slowest, r.rep.Failures)
	}
	if !bytes.Contains(r.junit, []byte(`name="clone-1: reboot: ssh-host-key stable"`)) || !bytes.Contains(r.junit, []byte(`name="clone-1: within the boot budget"`)) {
		t.Errorf("the JUnit report has no case for the host keys across the reboot or the boot budget")
	}
}

// proveVirtSysprep: virt-sysprep's default run leaves one machine-id in
// the template (customize writes it after machine-id emptied the file),
// and the clone boots with it: prove fails on the machine-id shared by
// the clone and the template. One clone is enough, since the comparison
// is with the template's own ID, read offline. The host keys are not
// shared: virt-sysprep removes them and the clone makes its own.
func proveVirtSysprep(ctx context.Context, t *testing.T, e *env) {
	if e.virtSysprep.image == "" {
		t.Fatal("no virt-sysprep template: the templates step did not make it")
	}
	r := runProve(ctx, t, e, "virt-sysprep", e.virtSysprep.image, baseUserData, 1, proveTimeout,
		"--kernel", e.img.Kernel, "--initrd", e.img.Initrd, "--append", "root=LABEL=rootfs rw console=ttyS0 panic=-1")
	if r.exit != prove.ExitFailed {
		t.Errorf("exit %d, want 1", r.exit)
	}
	r.expectCollision(t, guestid.ItemMachineID, hashOf(t, e.virtSysprep.machineID), "clone-1", prove.TemplateName)
	r.expectItems(t, prove.ItemShared, guestid.ItemMachineID)
	if len(r.collisions(guestid.ItemHostKey)) != 0 {
		t.Errorf("host keys shared after virt-sysprep: %+v", r.collisions(guestid.ItemHostKey))
	}
	if c := r.rep.Clones[0]; c.Boot != prove.BootUp {
		t.Errorf("clone-1: boot %s (%s), want up", c.Boot, c.Problem)
	}
	r.noMachineID(t, e.virtSysprep.machineID, e.template.machineID)
}

// proveNoAgent: the sealed root with qemu-guest-agent masked, booted
// directly (--kernel: a bare filesystem image). No agent answers, so the
// verdict comes from guestcheck's summary line on the serial console, and
// the report says so: identity was not compared for the clone.
// guestcheck itself fails the clone on the masked agent.
func proveNoAgent(ctx context.Context, t *testing.T, e *env) {
	r := runProve(ctx, t, e, "no-agent", e.noAgent, baseUserData, 1, proveTimeout,
		"--kernel", e.img.Kernel, "--initrd", e.img.Initrd, "--append", "root=LABEL=rootfs rw console=ttyS0 panic=-1")
	c := r.rep.Clones[0]
	if c.Boot != prove.BootUp || c.Verdict == nil || c.VerdictSource != prove.SourceConsole {
		t.Fatalf("clone-1: boot %s, verdict %v from %q; want up, judged from the console", c.Boot, c.Verdict, c.VerdictSource)
	}
	if c.Identity != nil {
		t.Errorf("clone-1: an identity without an agent: %+v", c.Identity)
	}
	if !slices.ContainsFunc(c.Notes, func(n string) bool {
		return strings.Contains(n, "no guest agent answered") && strings.Contains(n, "console")
	}) {
		t.Errorf("clone-1: no note that the verdict is the console's: %v", c.Notes)
	}
	if c.Verdict.Status != "FAIL" || c.Verdict.Counts.Fail == 0 {
		t.Errorf("clone-1: console verdict %+v, want FAIL (guestcheck fails a masked agent)", c.Verdict)
	}
	if r.exit != prove.ExitFailed {
		t.Errorf("exit %d, want 1", r.exit)
	}
	r.expectItems(t, prove.ItemNotCompared, guestid.ItemHostKey, guestid.ItemInstanceID)
}

// proveNoBoot: a template whose fstab requires a device that never
// appears ends in emergency mode; prove fails it within its deadline,
// as soon as the console shows the emergency shell, with the console's
// tail, which shows the shell.
func proveNoBoot(ctx context.Context, t *testing.T, e *env) {
	const deadline = 8 * time.Minute
	r := runProve(ctx, t, e, "no-boot", e.noBoot, baseUserData, 1, deadline,
		"--kernel", e.img.Kernel, "--initrd", e.img.Initrd, "--append", "root=LABEL=rootfs rw console=ttyS0 panic=-1")
	if r.exit != prove.ExitFailed {
		t.Errorf("exit %d, want 1", r.exit)
	}
	if r.elapsed > deadline {
		t.Errorf("prove took %s, past its %s deadline", r.elapsed.Round(time.Second), deadline)
	}
	c := r.rep.Clones[0]
	if c.Boot != prove.BootFailed || !strings.Contains(c.Problem, "emergency mode") && !strings.Contains(c.Problem, "root account is locked") {
		t.Errorf("clone-1: boot %s (%s), want failed in emergency mode", c.Boot, c.Problem)
	}
	tailText := strings.Join(c.ConsoleTail, "\n")
	// prove stops the clone at this line: what the shell says after it
	// never reaches the tail.
	if !strings.Contains(tailText, "You are in emergency mode") {
		t.Errorf("the console tail does not show the emergency shell:\n%s", tailText)
	}
	// The device systemd waited for shows earlier on the console, which
	// --keep kept: systemd prints no line when its 5 s run out.
	if con := r.keptConsole(t, "clone-1"); !strings.Contains(con, "/dev/disk/by-label/gc-missing") {
		t.Errorf("the kept console does not show the device the boot waited for (/dev/disk/by-label/gc-missing)")
	}
	if !slices.ContainsFunc(r.rep.Failures, func(f prove.Failure) bool { return f.Clone == "clone-1" && strings.Contains(f.Fix, "fstab") }) {
		t.Errorf("no failure for clone-1 whose fix names fstab: %+v", r.rep.Failures)
	}
	r.expectJUnit(t, []string{"clone-1"}, nil)
}

func xmlUnmarshal(b []byte, v any) error { return xml.Unmarshal(b, v) }

// proveCopies: the sealed root boots as clone-1 under a boot budget no
// TCG boot meets (--boot-budget 20s: it fails naming the slowest units),
// reboots (--reboot: a sealed template is the same VM across its reboot,
// every item stable, no first-boot work again), powers off, and its disk is copied as two
// platforms copy a VM that has booted (--copy). Harvester's Clone keeps the firmware UUID and the seed (the
// same instance-id, and a network-config that matches the NIC by the
// source's MAC) and gives a new MAC: cloud-init sees no new instance,
// so the copy keeps the source's machine-id, host keys, hostname and
// instance-id, and has no network on its new MAC, for the reason the
// report names; guestcheck inside it fails network-identity
// (identity-copy-kept-instance). A VirtualMachineClone renews the UUID,
// MAC and instance: its network comes up, cloud-init makes new host
// keys and a hostname, and it shares only what no copy renews, the
// machine-id on the disk.
func proveCopies(ctx context.Context, t *testing.T, e *env) {
	r := runProve(ctx, t, e, "copies", e.sealedRoot, baseUserData, 1, proveTimeout,
		"--kernel", e.img.Kernel, "--initrd", e.img.Initrd, "--append", "root=LABEL=rootfs rw console=ttyS0 panic=-1",
		"--reboot", "--boot-budget", "20s", "--copy", "harvester-clone", "--copy", "kubevirt-clone")
	if r.exit != prove.ExitFailed {
		t.Errorf("exit %d, want 1", r.exit)
	}
	src := r.rep.Clones[0]
	if src.Boot != prove.BootUp || !slices.ContainsFunc(src.Notes, func(n string) bool { return strings.HasPrefix(n, "powered off for the copies") }) {
		t.Fatalf("clone-1: boot %s (%s), notes %q: want up and powered off for the copies", src.Boot, src.Problem, src.Notes)
	}
	if rb := src.Reboot; rb == nil || rb.Boot != prove.BootUp || len(rb.Changed) != 0 || !rb.FirstBootRead {
		t.Errorf("clone-1's reboot: %+v; want up, nothing changed, first-boot work compared", rb)
	}
	// No TCG boot reaches guestcheck's verdict within 20 s: the budget
	// fails each of clone-1's boots, naming the slowest units.
	for _, f := range r.rep.Failures {
		budget := f.Clone == "clone-1" && strings.Contains(f.Message, "over the --boot-budget of 20s")
		if f.Step != prove.StepCopy && !budget {
			t.Errorf("a failure of the sealed template itself: %+v", f)
		}
	}
	if src.BootTime == nil || src.BootTime.Slowest == "" || !slices.ContainsFunc(r.rep.Failures, func(f prove.Failure) bool {
		return f.Clone == "clone-1" && f.Step == "" && strings.Contains(f.Message, "slowest units on the boot's critical chain: "+src.BootTime.Slowest)
	}) {
		t.Errorf("clone-1's first boot (%+v) did not fail the 20 s budget naming its slowest units: %+v", src.BootTime, r.rep.Failures)
	}
	if len(r.rep.Copies) != 2 {
		t.Fatalf("%d copies, want 2", len(r.rep.Copies))
	}
	shared := func(c prove.CopyResult) []guestid.Item {
		var l []guestid.Item
		for _, s := range c.Shared {
			l = append(l, s.Item)
		}
		return l
	}
	hv, kv := r.rep.Copies[0], r.rep.Copies[1]
	for _, c := range []prove.CopyResult{hv, kv} {
		if c.Copy.Boot != prove.BootUp || c.Copy.Identity == nil {
			t.Fatalf("%s (%s): boot %s (%s), no identity; console tail:\n%s", c.Copy.Name, c.Platform, c.Copy.Boot, c.Copy.Problem, strings.Join(c.Copy.ConsoleTail, "\n"))
		}
	}
	if hv.Copy.FirmwareUUID != src.FirmwareUUID || hv.Copy.MAC == src.MAC || kv.Copy.FirmwareUUID == src.FirmwareUUID || kv.Copy.MAC == src.MAC {
		t.Errorf("UUIDs and MACs: clone-1 %s %s, Harvester copy %s %s, VirtualMachineClone %s %s", src.FirmwareUUID, src.MAC,
			hv.Copy.FirmwareUUID, hv.Copy.MAC, kv.Copy.FirmwareUUID, kv.Copy.MAC)
	}
	for _, it := range []guestid.Item{guestid.ItemMachineID, guestid.ItemHostKey, guestid.ItemHostname, guestid.ItemInstanceID} {
		if !slices.Contains(shared(hv), it) {
			t.Errorf("the Harvester copy does not share %s with its source: shares %v", it, shared(hv))
		}
	}
	if len(src.Identity.DHCPClients) > 0 && !slices.Contains(shared(hv), guestid.ItemDHCPClient) {
		t.Errorf("clone-1 has a DHCP client identity %+v, and the Harvester copy does not share it: %+v", src.Identity.DHCPClients, hv.Copy.Identity.DHCPClients)
	}
	t.Logf("clone-1's DHCP client identity: %+v; the Harvester copy shares %v", src.Identity.DHCPClients, shared(hv))
	if hv.Network.Up || !strings.Contains(hv.Network.Reason, "by the source's MAC "+src.MAC) {
		t.Errorf("the Harvester copy's network: %+v; want down, pinned to %s", hv.Network, src.MAC)
	}
	if !slices.ContainsFunc(r.rep.Failures, func(f prove.Failure) bool {
		return f.Clone == hv.Copy.Name && f.Step == prove.StepCopy && f.Item == guestid.ItemHostKey && strings.Contains(f.Fix, "spec.template.spec.domain.firmware.uuid")
	}) {
		t.Errorf("no copy failure naming the host keys with Harvester's fix: %+v", r.rep.Failures)
	}
	if !slices.ContainsFunc(hv.Copy.Failing, func(s string) bool { return strings.HasPrefix(s, "network-identity:") }) {
		t.Errorf("guestcheck inside the Harvester copy did not fail network-identity: failing %q", hv.Copy.Failing)
	}
	if !kv.Network.Up {
		t.Errorf("the VirtualMachineClone's network did not come up: %+v", kv.Network)
	}
	if got := shared(kv); !slices.Contains(got, guestid.ItemMachineID) || slices.ContainsFunc(got, func(it guestid.Item) bool {
		return it == guestid.ItemHostKey || it == guestid.ItemHostname || it == guestid.ItemInstanceID || it == guestid.ItemAddress
	}) {
		t.Errorf("the VirtualMachineClone shares %v: want the machine-id, and no host keys, hostname, instance-id or address", got)
	}
	for _, name := range []string{`name="copy-1 (harvester-clone): ssh-host-key not shared with clone-1"`, `name="copy-1 (harvester-clone): network up on its MAC"`,
		`name="copy-2 (kubevirt-clone): boots"`, `name="clone-1: within the boot budget"`} {
		if !bytes.Contains(r.junit, []byte(name)) {
			t.Errorf("the JUnit report has no case %s", name)
		}
	}
}
