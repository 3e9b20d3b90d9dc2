package prove

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// ItemFirstBoot names first-boot work that ran again after a reboot
// (cloud-init's per-instance modules): not an identity item, but a
// reason a reboot changed who the VM is.
const ItemFirstBoot = "first-boot"

// RebootResult is a clone's second boot under --reboot: the verdict and
// identity after it rebooted itself, and what changed across the reboot.
type RebootResult struct {
	// Boot is up, failed or timeout; Problem says why when not up.
	Boot    string `json:"boot" schema:"req,enum=up|failed|timeout"`
	Problem string `json:"problem,omitempty"`
	// How is how the reboot was asked for.
	How           string            `json:"how,omitempty"`
	Verdict       *BootVerdict      `json:"verdict,omitempty"`
	VerdictSource string            `json:"verdict_source,omitempty"`
	Failing       []string          `json:"failing,omitempty"`
	Checks        []CheckVerdict    `json:"checks,omitempty"`
	Identity      *guestid.Identity `json:"identity,omitempty"`
	// Changed lists what the reboot changed: empty when the clone is the
	// same VM after it.
	Changed []Change `json:"changed" schema:"req" doc:"what the reboot changed; empty when the clone is the same VM after it"`
	// FirstBootRead says whether cloud-init's per-instance semaphores
	// were read on both boots (first-boot work is judged only then).
	FirstBootRead bool     `json:"first_boot_read"`
	Notes         []string `json:"notes,omitempty"`
	ConsoleTail   []string `json:"console_tail,omitempty"`
	Timings       Timings  `json:"timings" schema:"req"`
	// BootTime is the second boot's, from the reboot's request.
	BootTime *BootTime `json:"boot_time,omitempty"`
}

// Change is one item that differs across a reboot.
type Change struct {
	Item   string `json:"item" schema:"req,enum=machine-id|ssh-host-key|hostname|dhcp-client-id|instance-id|address|first-boot"`
	Before string `json:"before" schema:"req"`
	After  string `json:"after" schema:"req"`
}

// rebootFixes say what to fix when an item changes across a reboot.
var rebootFixes = map[string]string{
	string(guestid.ItemMachineID):  "keep /etc/machine-id across boots: a writable, persistent /etc and no unit or script that empties or rewrites it at boot or shutdown",
	string(guestid.ItemHostKey):    "generate SSH host keys once: remove whatever regenerates them at every boot (ssh-keygen -A or rm /etc/ssh/ssh_host_* in a per-boot unit, rc.local or a cloud-init bootcmd); cloud-init's ssh module already makes new keys once per instance",
	string(guestid.ItemHostname):   "set the hostname once per instance (cloud-init's set_hostname from meta-data, or hostnamectl), not from a per-boot script",
	string(guestid.ItemDHCPClient): "keep the DHCP client identity across boots: lease and DUID files on persistent storage, and a machine-id that stays",
	string(guestid.ItemInstanceID): "pin cloud-init's datasource (datasource_list) so that every boot finds the same instance: a new instance-id makes cloud-init treat the VM as a new one",
	string(guestid.ItemAddress):    "keep the address across boots: a stable DHCP client identity, or the static address of the instance's network-config",
	ItemFirstBoot:                  "keep /var/lib/cloud across boots (not on tmpfs, no cloud-init clean in a boot unit) and the instance-id stable, so that first-boot work runs once per instance",
}

// semDir holds cloud-init's per-instance module semaphores: a module that
// runs again rewrites its file.
const semDir = "/var/lib/cloud/instance/sem"

// maxSems bounds the semaphores compared.
const maxSems = 256

// semaphores reads the per-instance semaphores' modification times; nil
// when the guest has none (no cloud-init, or it did not run).
func semaphores(ctx context.Context, a qga.Agent) map[string]time.Time {
	es, err := agentFS{ctx: ctx, a: a}.ReadDir(semDir)
	if err != nil {
		return nil
	}
	out := map[string]time.Time{}
	for _, e := range es {
		if len(out) == maxSems {
			break
		}
		out[cleanLine(e.Name)] = e.Mtime
	}
	return out
}

// reboot asks the running clone to reboot itself, waits for its agent
// again and takes a second verdict; r.res keeps the first boot, with the
// second in r.res.Reboot. It is called only for a clone whose first boot
// came up with an identity.
func (r *cloneRun) reboot(ctx context.Context, a *qga.Client) {
	name := r.clone.Name
	first := r.res
	rb := &RebootResult{Boot: BootFailed, Changed: []Change{}}
	defer func() { r.res = first; r.res.Reboot = rb }()
	semsBefore := semaphores(ctx, a)
	r.cfg.Progress.Phase(name, "rebooting")
	// QEMU runs with -no-reboot (a guest's reboot would end it): tell it
	// to reset the guest on a reboot from here on instead.
	if _, err := r.vm.qmp(`{"execute":"set-action","arguments":{"reboot":"reset"}}`, 10*time.Second); err != nil {
		rb.Problem = "QEMU cannot keep the clone running across a reboot (QMP set-action needs QEMU 6.0 or later): " + cleanLine(err.Error())
		return
	}
	r.con.Poll()
	off := r.con.Offset()
	t0 := time.Now()
	rb.How = "the guest agent's guest-shutdown mode=reboot"
	if err := a.Send(ctx, "guest-shutdown", map[string]string{"mode": "reboot"}); err != nil {
		rb.Notes = append(rb.Notes, "the guest agent did not take the reboot ("+cleanLine(err.Error())+"): reset through QMP instead")
		rb.How = "QMP system_reset"
		if _, err := r.vm.qmp(`{"execute":"system_reset"}`, 10*time.Second); err != nil {
			rb.Problem = "the reboot was not taken: " + cleanLine(err.Error())
			return
		}
	}
	a.Close()
	if err := r.waitReset(ctx); err != nil {
		rb.Notes = append(rb.Notes, err.Error()+": reset through QMP instead")
		rb.How = "QMP system_reset, after guest-shutdown mode=reboot did not reboot the guest"
		if _, err := r.vm.qmp(`{"execute":"system_reset"}`, 10*time.Second); err != nil {
			rb.Problem = "the reboot was not taken: " + cleanLine(err.Error())
			return
		}
	}
	cold, err := r.afterReset(ctx)
	if err != nil {
		rb.Problem = err.Error()
		return
	}
	// Times of the second boot run from the reboot's request.
	if cold {
		rb.How += "; QEMU started again (a cold boot) when the firmware stalled after the reset"
		rb.Notes = append(rb.Notes, fmt.Sprintf("the firmware wrote nothing to the console for %s after the reset (OVMF under TCG now and then stalls on a warm reset): prove powered the clone off and started QEMU again on the same disk and firmware variables; the first boot's console is %s", firmwareStall, filepath.Base(r.clone.Console())+firstBootSuffix))
		r.con = NewConsoleAt(r.clone.Console(), t0, 0)
	} else {
		r.con = NewConsoleAt(r.clone.Console(), t0, off)
	}
	r.res = CloneResult{Name: name, Boot: BootFailed}
	r.rebooted = true
	a2, err := r.waitAgent(ctx)
	switch {
	case err != nil:
		r.res.Problem = err.Error()
		r.fail(ctx)
	case a2 == nil:
		r.res.Problem = "the guest agent did not answer after the reboot"
		r.fail(ctx)
	default:
		defer a2.Close()
		r.collect(ctx, a2)
		r.phaseTimes(r.con.start)
		semsAfter := semaphores(ctx, a2)
		rb.FirstBootRead = semsBefore != nil && semsAfter != nil
		rb.Changed = append(append(rb.Changed, identityChanges(first.Identity, r.res.Identity)...), semChanges(semsBefore, semsAfter)...)
	}
	second := r.res
	rb.Boot, rb.Problem, rb.Verdict, rb.VerdictSource = second.Boot, second.Problem, second.Verdict, second.VerdictSource
	rb.Failing, rb.Checks, rb.Identity, rb.ConsoleTail = second.Failing, second.Checks, second.Identity, second.ConsoleTail
	rb.Notes = append(rb.Notes, second.Notes...)
	rb.Timings, rb.BootTime = second.Timings, second.BootTime
	if second.Timings.Boot == 0 {
		rb.Timings.Boot = ms(time.Since(t0))
	}
	first.Baseline = append(first.Baseline, prefixed("after the reboot: ", second.Baseline)...)
}

func prefixed(p string, l []string) []string {
	var out []string
	for _, s := range l {
		out = append(out, p+s)
	}
	return out
}

// resetWait bounds how long a guest may take to shut down for its
// reboot before prove resets it (a TCG guest stops its units slowly).
var resetWait = 3 * time.Minute

// waitReset waits for QEMU's RESET event: the guest went down and the
// machine was reset for the next boot.
func (r *cloneRun) waitReset(ctx context.Context) error {
	deadline := time.Now().Add(resetWait)
	for {
		if _, ok := r.vm.Event("RESET"); ok {
			return nil
		}
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%s before the guest rebooted", ended(ctx))
		case !r.vm.Alive():
			return fmt.Errorf("QEMU stopped instead of rebooting the guest (%v)", r.vm.exitErr())
		case time.Now().After(deadline):
			return fmt.Errorf("the guest did not reboot within %s", resetWait)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// firmwareStall is how long prove waits after a clone's reset for the
// firmware's first output before it boots the clone cold. Under TCG,
// OVMF wrote nothing after the warm reset for two of the four UEFI clones
// prove had rebooted, one vCPU spinning for 20 minutes, and for none of
// 12 reboots of the same image in a plain QEMU, where OVMF's first
// output came 13 to 37 s after the reset on a 2-core host with two
// guests booting. A variable for the tests.
var firmwareStall = 2 * time.Minute

// firstBootSuffix names the console of the boot before a cold restart.
const firstBootSuffix = ".boot1"

// afterReset waits, once QEMU reset the clone for its reboot, for the
// console to gain anything (the firmware starting). When nothing comes
// within firmwareStall it stops that QEMU (the guest had shut down for
// its reboot) and starts a new one on the clone's disk, seed, firmware
// variables, MAC and UUID, and reports cold. A QEMU that died or a run
// that ended is left for waitAgent to report. Only under UEFI: OVMF
// always writes to the serial console, where SeaBIOS and a bootloader
// without a serial terminal may stay silent until the kernel's lines.
func (r *cloneRun) afterReset(ctx context.Context) (cold bool, err error) {
	if r.boot.Firmware != FirmwareUEFI {
		return false, nil
	}
	r.con.Poll()
	at := r.con.Offset()
	deadline := time.Now().Add(firmwareStall)
	for {
		r.con.Poll()
		if r.con.Offset() > at || ctx.Err() != nil || !r.vm.Alive() {
			return false, nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	r.cfg.Progress.Phase(r.clone.Name, "booting cold")
	r.vm.Kill()
	c := r.clone
	if err := os.Rename(c.Console(), c.Console()+firstBootSuffix); err != nil {
		return true, fmt.Errorf("the firmware stalled after the reset, and the clone could not be booted again: %v", err)
	}
	for _, p := range []string{c.QMP(), c.QGA()} {
		os.Remove(p)
	}
	if err := r.newConsole(); err != nil {
		return true, fmt.Errorf("the firmware stalled after the reset, and the clone could not be booted again: %v", err)
	}
	v, err := Start(ctx, r.cfg.QEMU, c, r.boot, Devices{}, r.jail)
	if err != nil {
		return true, fmt.Errorf("the firmware stalled after the reset, and QEMU did not start again: %v", err)
	}
	r.vm = v
	return true, nil
}

// identityChanges lists the items that differ between a clone's boots:
// machine-id, SSH host keys, hostname, DHCP client identity (per source
// both boots have), instance-id and each NIC's addresses. An item read
// on one boot only is not a change.
func identityChanges(before, after *guestid.Identity) []Change {
	if before == nil || after == nil {
		return nil
	}
	var out []Change
	add := func(it guestid.Item, b, a string) {
		if b != a && b != "" && a != "" {
			out = append(out, Change{Item: string(it), Before: b, After: a})
		}
	}
	add(guestid.ItemMachineID, before.MachineIDHash, after.MachineIDHash)
	add(guestid.ItemHostKey, keySet(before.HostKeys), keySet(after.HostKeys))
	add(guestid.ItemHostname, before.Hostname, after.Hostname)
	bd, ad := dhcpBySource(before.DHCPClients), dhcpBySource(after.DHCPClients)
	var bs, as []string
	for _, src := range sortedKeys(bd) {
		if v, ok := ad[src]; ok && v != bd[src] {
			bs, as = append(bs, src+" "+bd[src]), append(as, src+" "+v)
		}
	}
	add(guestid.ItemDHCPClient, strings.Join(bs, "; "), strings.Join(as, "; "))
	add(guestid.ItemInstanceID, guestid.InstanceKey(*before), guestid.InstanceKey(*after))
	ba, aa := addrsByMAC(before.Interfaces), addrsByMAC(after.Interfaces)
	bs, as = nil, nil
	for _, mac := range sortedKeys(ba) {
		if v, ok := aa[mac]; ok && v != ba[mac] {
			bs, as = append(bs, mac+" "+ba[mac]), append(as, mac+" "+orNone(v))
		}
	}
	add(guestid.ItemAddress, strings.Join(bs, "; "), strings.Join(as, "; "))
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func keySet(ks []guestid.HostKey) string {
	var l []string
	for _, k := range ks {
		l = append(l, k.Fingerprint)
	}
	slices.Sort(l)
	return strings.Join(slices.Compact(l), ", ")
}

func dhcpBySource(cs []guestid.DHCPClient) map[string]string {
	m := map[string]string{}
	for _, c := range cs {
		k := c.Source
		if c.Interface != "" {
			k += " (" + c.Interface + ")"
		}
		if m[k] != "" {
			m[k] += ","
		}
		m[k] += c.Kind + ":" + c.Value
	}
	return m
}

func addrsByMAC(ifs []guestid.Interface) map[string]string {
	m := map[string]string{}
	for _, i := range ifs {
		if i.MAC == "" {
			continue
		}
		a := slices.Clone(i.Addresses)
		slices.Sort(a)
		m[i.MAC] = strings.Join(a, ",")
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// semChanges names the per-instance semaphores that were written again,
// or first, after the reboot: cloud-init ran first-boot work again.
func semChanges(before, after map[string]time.Time) []Change {
	if before == nil || after == nil {
		return nil
	}
	var again []string
	for n, t := range after {
		if b, ok := before[n]; !ok || !b.Equal(t) {
			again = append(again, n)
		}
	}
	if len(again) == 0 {
		return nil
	}
	slices.Sort(again)
	return []Change{{Item: ItemFirstBoot, Before: fmt.Sprintf("%d per-instance modules", len(before)), After: strings.Join(again, ", ")}}
}

// StepReboot is Failure.Step for a failure of a clone's second boot.
const StepReboot = "reboot"

// rebootFailures are the reasons a clone's reboot fails it: it did not
// come back or guestcheck failed it, or an item changed.
func rebootFailures(c CloneResult) []Failure {
	rb := c.Reboot
	if rb == nil {
		return nil
	}
	var out []Failure
	if why := cloneFailed(rb.asClone(c)); why != "" {
		out = append(out, Failure{Clone: c.Name, Step: StepReboot, Message: "after the reboot: " + why, Fix: cloneFix(rb.asClone(c))})
	}
	for _, ch := range rb.Changed {
		f := Failure{Clone: c.Name, Step: StepReboot, Message: ch.message(), Fix: rebootFixes[ch.Item]}
		if ch.Item != ItemFirstBoot {
			f.Item = guestid.Item(ch.Item)
		}
		out = append(out, f)
	}
	return out
}

// asClone is the second boot as a clone's result, for the first boot's
// judges (cloneFailed, cloneFix).
func (rb RebootResult) asClone(c CloneResult) CloneResult {
	return CloneResult{Name: c.Name, Boot: rb.Boot, Problem: rb.Problem, Verdict: rb.Verdict, VerdictSource: rb.VerdictSource,
		Failing: rb.Failing, Identity: rb.Identity, IdentityOnly: c.IdentityOnly, ConsoleTail: rb.ConsoleTail, Checks: rb.Checks,
		Timings: rb.Timings}
}

// RebootItems are what --reboot compares across a clone's boots.
var RebootItems = []string{string(guestid.ItemMachineID), string(guestid.ItemHostKey), string(guestid.ItemHostname),
	string(guestid.ItemDHCPClient), string(guestid.ItemInstanceID), string(guestid.ItemAddress), ItemFirstBoot}

// message says what changed across the reboot.
func (ch Change) message() string {
	name := "the " + ch.Item
	switch ch.Item {
	case ItemFirstBoot:
		return "first-boot work ran again after the reboot: cloud-init's per-instance modules " + ch.After + " ran again"
	case string(guestid.ItemMachineID):
		name = "the machine-id (hashed)"
	case string(guestid.ItemHostKey):
		name = "the SSH host keys"
	case string(guestid.ItemDHCPClient):
		name = "the DHCP client identity"
	}
	return fmt.Sprintf("%s changed across the reboot (%s, then %s)", name, ch.Before, ch.After)
}
