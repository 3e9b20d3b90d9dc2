package prove

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestIdentityChanges: each item that differs across a reboot is named
// with both values; an item read on one boot only, a DHCP source that
// only one boot has, and a NIC only one boot shows are no change.
func TestIdentityChanges(t *testing.T) {
	before := &guestid.Identity{MachineIDHash: hash(mid1), Hostname: "prove-1", InstanceID: "i-1",
		HostKeys:    []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: key1}},
		DHCPClients: []guestid.DHCPClient{{Kind: "duid", Value: "00:04:aa", Source: "systemd-networkd: from machine-id"}},
		Interfaces:  []guestid.Interface{{Name: "eth0", MAC: "52:54:00:00:00:01", Addresses: []string{"192.0.2.8/28"}}}}
	same := *before
	if ch := identityChanges(before, &same); len(ch) != 0 {
		t.Errorf("the same identity: changes %+v", ch)
	}
	after := guestid.Identity{MachineIDHash: hash(mid2), Hostname: "localhost", InstanceID: "i-2",
		HostKeys: []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: key2}},
		DHCPClients: []guestid.DHCPClient{{Kind: "duid", Value: "00:04:bb", Source: "systemd-networkd: from machine-id"},
			{Kind: "client-id", Value: "01:52", Source: "/var/lib/dhcp/dhclient.eth0.leases:3"}},
		Interfaces: []guestid.Interface{{Name: "eth0", MAC: "52:54:00:00:00:01", Addresses: []string{"192.0.2.9/28"}},
			{Name: "eth1", MAC: "52:54:00:00:00:09", Addresses: []string{"198.51.100.8/24"}}}}
	ch := identityChanges(before, &after)
	var items []string
	for _, c := range ch {
		items = append(items, c.Item)
	}
	want := []string{"machine-id", "ssh-host-key", "hostname", "dhcp-client-id", "instance-id", "address"}
	if !slices.Equal(items, want) {
		t.Fatalf("changed %v, want %v", items, want)
	}
	if c := ch[5]; c.Before != "52:54:00:00:00:01 192.0.2.8/28" || c.After != "52:54:00:00:00:01 192.0.2.9/28" {
		t.Errorf("address change %+v", c)
	}
	if c := ch[3]; strings.Contains(c.After, "dhclient") {
		t.Errorf("a DHCP source only the second boot has is a change: %+v", c)
	}
	if m := ch[1].message(); m != "the SSH host keys changed across the reboot ("+key1+", then "+key2+")" {
		t.Errorf("message %q", m)
	}
	// Read on one boot only: nothing to compare.
	if ch := identityChanges(before, &guestid.Identity{MachineIDHash: hash(mid1)}); len(ch) != 0 {
		t.Errorf("items unread after the reboot: changes %+v", ch)
	}
}

// TestSemChanges: a per-instance semaphore written again, or first, after
// the reboot is first-boot work that ran again; the same ones are none.
func TestSemChanges(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	before := map[string]time.Time{"config_ssh": t0, "config_set_hostname": t0}
	if ch := semChanges(before, map[string]time.Time{"config_ssh": t0, "config_set_hostname": t0}); len(ch) != 0 {
		t.Errorf("unchanged semaphores: %+v", ch)
	}
	ch := semChanges(before, map[string]time.Time{"config_ssh": t0.Add(time.Minute), "config_set_hostname": t0, "config_users_groups": t0.Add(time.Minute)})
	if len(ch) != 1 || ch[0].Item != ItemFirstBoot || ch[0].After != "config_ssh, config_users_groups" {
		t.Fatalf("changes %+v", ch)
	}
	if m := ch[0].message(); m != "first-boot work ran again after the reboot: cloud-init's per-instance modules config_ssh, config_users_groups ran again" {
		t.Errorf("message %q", m)
	}
	if semChanges(nil, before) != nil {
		t.Error("semaphores unread before the reboot: a change")
	}
}

// TestRebootFailures: a clone whose reboot changed an item, or that
// guestcheck failed after it, fails naming the step, the item and the fix.
func TestRebootFailures(t *testing.T) {
	r := rebootReport()
	if r.Proven {
		t.Fatal("a clone whose host keys changed across the reboot proves")
	}
	var got []string
	for _, f := range r.Failures {
		if f.Step == "" && strings.Contains(f.Message, "--boot-budget") {
			continue // TestBootBudget
		}
		if f.Step != StepReboot || f.Clone != "clone-2" || f.Fix == "" {
			t.Errorf("failure %+v: want clone-2's, of the reboot, with a fix", f)
		}
		got = append(got, string(f.Item))
	}
	if !slices.Equal(got, []string{"", "ssh-host-key", ""}) {
		t.Errorf("failures' items %q", got)
	}
	if len(rebootFailures(r.Clones[0])) != 0 {
		t.Errorf("clone-1 is the same VM after its reboot: %+v", rebootFailures(r.Clones[0]))
	}
}

// TestBootBudget: a boot over --boot-budget fails naming the slowest
// units guestcheck saw (or saying it saw none); one within it, or a run
// without a budget, does not; JUnit has a case per boot for it.
func TestBootBudget(t *testing.T) {
	bt := &BootTime{ToVerdictMS: 131900, Slowest: "regen-ssh-keys.service +58.0s, cloud-init.service +20.1s"}
	f, ok := budgetFailure("clone-2", "", bt, 2*time.Minute)
	if !ok || f.Message != "took 2m11.9s from QEMU's start to guestcheck's verdict, over the --boot-budget of 2m0s; slowest units on the boot's critical chain: regen-ssh-keys.service +58.0s, cloud-init.service +20.1s" {
		t.Errorf("over budget: %v %q", ok, f.Message)
	}
	f, ok = budgetFailure("clone-2", StepReboot, &BootTime{ToVerdictMS: 61000}, time.Minute)
	if !ok || f.Step != StepReboot || !strings.Contains(f.Message, "from the reboot") || !strings.Contains(f.Message, "named no slowest units") {
		t.Errorf("reboot over budget without guestcheck's finding: %v %+v", ok, f)
	}
	for _, b := range []time.Duration{0, 3 * time.Minute} {
		if _, ok := budgetFailure("clone-2", "", bt, b); ok {
			t.Errorf("budget %s fails a boot of %dms", b, bt.ToVerdictMS)
		}
	}
	if _, ok := budgetFailure("clone-2", "", nil, time.Second); ok {
		t.Error("a boot without a verdict fails the budget (it fails as a boot already)")
	}
	base := Config{Image: "x", Clones: 1, MemoryMiB: 512, CPUs: 1, Timeout: 10 * time.Minute, Firmware: FirmwareAuto, Accel: AccelAuto}
	for budget, want := range map[time.Duration]string{
		-time.Second:     "--boot-budget -1s: a duration above zero, such as 3m",
		11 * time.Minute: "--boot-budget 11m0s: longer than --timeout 10m0s, so it could never fail a boot",
	} {
		c := base
		c.BootBudget = budget
		if err := c.Validate(); err == nil || err.Error() != want {
			t.Errorf("--boot-budget %s: %v, want %q", budget, err, want)
		}
	}
	var b strings.Builder
	if err := WriteJUnit(&b, rebootReport()); err != nil {
		t.Fatal(err)
	}
	x := b.String()
	for _, want := range []string{`name="clone-2: within the boot budget"`, `name="clone-1: reboot: within the boot budget"`, `took 2m11.9s from QEMU&#39;s start`} {
		if !strings.Contains(x, want) {
			t.Errorf("JUnit has no %s", want)
		}
	}
}

// TestRebootItemsAreTheSchemas: the items --reboot compares are the
// enum of a change's item in the report's rules.
func TestRebootItemsAreTheSchemas(t *testing.T) {
	f, ok := reflect.TypeFor[Change]().FieldByName("Item")
	if !ok {
		t.Fatal("Change has no Item")
	}
	_, enum, _ := strings.Cut(f.Tag.Get("schema"), "enum=")
	if got := strings.Join(RebootItems, "|"); enum != got {
		t.Errorf("Change.Item's enum %q, want RebootItems %q", enum, got)
	}
}

// TestColdBootAfterStall: when nothing reaches the console within
// firmwareStall of the reset, the clone's QEMU is replaced by a new one
// on the same files (its first console kept aside); a console that
// gains output, a dead QEMU or an ended run are left alone.
func TestColdBootAfterStall(t *testing.T) {
	qemuImg := testenv.Tool(t, "qemu-img", "qemu-utils")
	t.Setenv(fakeEnv, "silent")
	old := firmwareStall
	firmwareStall = 500 * time.Millisecond
	defer func() { firmwareStall = old }()
	dir := searchableTempDir(t)
	_, f := tinyTemplate(t, dir, 0o644)
	j, c := oneClone(t, dir)
	ovmf := OVMF{Code: filepath.Join(dir, "OVMF_CODE.fd"), Vars: filepath.Join(dir, "OVMF_VARS.fd")}
	for _, p := range []string{ovmf.Code, ovmf.Vars} {
		os.WriteFile(p, make([]byte, 4096), 0o644)
	}
	boot := Boot{Firmware: FirmwareUEFI, OVMF: ovmf, Accel: AccelTCG, MemoryMiB: 128, CPUs: 1,
		Chain: &image.Chain{Layers: []image.Layer{{Path: f.Name(), Format: "raw", VirtualSize: 1 << 20, File: f}}}}
	r := &cloneRun{cfg: Config{QEMU: fakeBin, QEMUImg: qemuImg}.withDefaults(), clone: c, boot: boot, jail: j}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.prepare(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	start := func() {
		t.Helper()
		v, err := Start(ctx, fakeBin, c, boot, Devices{}, j)
		if err != nil {
			t.Fatal(err)
		}
		r.vm, r.con = v, NewConsole(c.Console(), time.Now())
	}
	start()
	first := r.vm
	// Output after the reset: the firmware started.
	go func() {
		time.Sleep(100 * time.Millisecond)
		f, _ := os.OpenFile(c.Console(), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("BdsDxe: loading Boot0001\r\n")
		f.Close()
	}()
	if cold, err := r.afterReset(ctx); cold || err != nil || r.vm != first {
		t.Errorf("output after the reset: cold %v, %v, want the same QEMU", cold, err)
	}
	// Nothing after the reset: a new QEMU on the same files.
	cold, err := r.afterReset(ctx)
	if !cold || err != nil || r.vm == first || first.Alive() || !r.vm.Alive() {
		t.Fatalf("a stalled firmware: cold %v, %v; first QEMU alive %v, now %v; want a new QEMU", cold, err, first.Alive(), r.vm.Alive())
	}
	b1, _ := os.ReadFile(c.Console() + firstBootSuffix)
	if !strings.Contains(string(b1), "SeaBIOS (version fake)") || !strings.Contains(string(b1), "BdsDxe") {
		t.Errorf("first boot's console %q", b1)
	}
	time.Sleep(200 * time.Millisecond)
	if b, _ := os.ReadFile(c.Console()); string(b) != "SeaBIOS (version fake)\r\nBooting from Hard Disk...\r\n" {
		t.Errorf("the new boot's console %q, want the fake's first lines alone", b)
	}
	// A dead QEMU is waitAgent's to report, not restarted.
	r.vm.Kill()
	dead := r.vm
	if cold, err := r.afterReset(ctx); cold || err != nil || r.vm != dead {
		t.Errorf("a dead QEMU: cold %v, %v", cold, err)
	}
	start()
	defer r.vm.Stop()
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if cold, err := r.afterReset(cctx); cold || err != nil {
		t.Errorf("an ended run: cold %v, %v", cold, err)
	}
	// SeaBIOS or a bootloader may stay silent until the kernel: only
	// UEFI clones are booted cold.
	r.boot.Firmware = FirmwareBIOS
	if cold, err := r.afterReset(ctx); cold || err != nil {
		t.Errorf("BIOS: cold %v, %v", cold, err)
	}
}
