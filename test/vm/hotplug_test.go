//go:build vmtest

package vm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/vmm"
	"github.com/guestcheck/guestcheck/internal/parse/cpulist"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// A guest with spec.Hotplug boots with spare CPU and memory slots and a
// QMP monitor of the test's own, so that CPUs and DIMMs can be
// hot-plugged into it as KubeVirt, Harvester or `virsh setvcpus --live`
// do. Its boot CPUs and memory stay what prove gives every guest (2 and
// 1 GiB): only the room to grow is added.
const (
	// hotplugMaxCPUs: two hot-added CPUs still leave one slot, so that
	// after them the check judges a VM that can receive more
	// (hotplug-cpu-auto-online, not hotplug-cpu-no-slots).
	hotplugMaxCPUs = 5
	// hotplugSlots DIMM slots up to hotplugMaxMem, one left after the
	// scenario's two DIMMs.
	hotplugSlots  = 3
	hotplugMaxMem = "2G"
	// hotplugDIMM is one DIMM: one memory block of the guest's
	// (block_size_bytes is 128 MiB for a guest of this size).
	hotplugDIMM = 128 << 20
)

// hotplugQMP is the guest's second QMP monitor: prove's launcher holds
// the first (its -qmp socket takes one client) for its own events.
func (v *VM) hotplugQMP() string { return filepath.Join(v.dir, "hotplug-qmp.sock") }

// qemuProgram is the QEMU startVM launches through prove.Start: the
// system's, or for a hotplug guest a wrapper in the guest's directory
// that runs it with prove's command line followed by the slots and the
// second monitor. QEMU takes the last -smp and -m (so the guest keeps
// prove's CPUs and memory, now with slots); the wrapper execs QEMU, so
// the process prove confines, kills and waits for is QEMU itself.
func (v *VM) qemuProgram() (string, error) {
	const qemu = "qemu-system-x86_64"
	if !v.spec.Hotplug {
		return qemu, nil
	}
	path, err := exec.LookPath(qemu)
	if err != nil {
		return "", err
	}
	extra := []string{
		"-smp", fmt.Sprintf("%d,maxcpus=%d", v.boot.CPUs, hotplugMaxCPUs),
		"-m", fmt.Sprintf("%dM,slots=%d,maxmem=%s", v.boot.MemoryMiB, hotplugSlots, hotplugMaxMem),
		"-qmp", "unix:" + v.hotplugQMP() + ",server=on,wait=off",
	}
	script := "#!/bin/sh\nexec " + shellQuote(path) + ` "$@"`
	for _, a := range extra {
		script += " " + shellQuote(a)
	}
	wrapper := filepath.Join(v.dir, "qemu-hotplug")
	if err := os.WriteFile(wrapper, []byte(script+"\n"), 0o700); err != nil {
		return "", err
	}
	// QEMU's dynamic user runs it (prove.NewJail).
	return wrapper, v.jail.Own(wrapper, 0o700)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// monitor is a QMP client on the hotplug monitor (vmm's, as prove's).
type monitor struct{ mon *vmm.Monitor }

func dialMonitor(ctx context.Context, path string) (*monitor, error) {
	mon, err := vmm.WaitMonitor(ctx, path, nil)
	if err != nil {
		return nil, err
	}
	return &monitor{mon}, nil
}

// run sends one command and decodes its return into result (when not
// nil).
func (m *monitor) run(ctx context.Context, cmd string, args map[string]any, result any) error {
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := m.mon.RunContext(ctx, b)
	if err != nil || result == nil {
		return err
	}
	var ret struct {
		Return json.RawMessage `json:"return"`
	}
	if err := json.Unmarshal(out, &ret); err != nil {
		return fmt.Errorf("QMP %s: %w: %.300s", b, err, out)
	}
	return json.Unmarshal(ret.Return, result)
}

func (m *monitor) close() { m.mon.Disconnect() }

// hotpluggableCPU is one entry of query-hotpluggable-cpus.
type hotpluggableCPU struct {
	Type    string         `json:"type"`
	Props   map[string]int `json:"props"`
	QOMPath string         `json:"qom-path"`
}

// addCPU hot-plugs the first free CPU slot QEMU lists, with the CPU
// type and topology properties QEMU names for it.
func (m *monitor) addCPU(ctx context.Context, id string) (hotpluggableCPU, error) {
	var cpus []hotpluggableCPU
	if err := m.run(ctx, "query-hotpluggable-cpus", nil, &cpus); err != nil {
		return hotpluggableCPU{}, err
	}
	var free []hotpluggableCPU
	for _, c := range cpus {
		if c.QOMPath == "" {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return hotpluggableCPU{}, fmt.Errorf("query-hotpluggable-cpus lists no free slot: %+v", cpus)
	}
	// QEMU lists the highest slot first; take the lowest.
	key := func(c hotpluggableCPU) []int {
		return []int{c.Props["node-id"], c.Props["socket-id"], c.Props["die-id"], c.Props["core-id"], c.Props["thread-id"]}
	}
	c := slices.MinFunc(free, func(a, b hotpluggableCPU) int { return slices.Compare(key(a), key(b)) })
	args := map[string]any{"driver": c.Type, "id": id}
	for k, v := range c.Props {
		args[k] = v
	}
	return c, m.run(ctx, "device_add", args, nil)
}

// addDIMM hot-plugs a DIMM of hotplugDIMM bytes and returns the guest
// physical address QEMU placed it at.
func (m *monitor) addDIMM(ctx context.Context, id string) (uint64, error) {
	if err := m.run(ctx, "object-add", map[string]any{"qom-type": "memory-backend-ram", "id": id + "-mem", "size": hotplugDIMM}, nil); err != nil {
		return 0, err
	}
	if err := m.run(ctx, "device_add", map[string]any{"driver": "pc-dimm", "id": id, "memdev": id + "-mem"}, nil); err != nil {
		return 0, err
	}
	var devs []struct {
		Type string `json:"type"`
		Data struct {
			ID   string `json:"id"`
			Addr uint64 `json:"addr"`
		} `json:"data"`
	}
	if err := m.run(ctx, "query-memory-devices", nil, &devs); err != nil {
		return 0, err
	}
	for _, d := range devs {
		if d.Data.ID == id {
			return d.Data.Addr, nil
		}
	}
	return 0, fmt.Errorf("query-memory-devices does not list %s: %+v", id, devs)
}

// hotplugScenario hot-plugs CPUs and DIMMs into v (booted with
// spec.Hotplug) and holds guestcheck's hotplug check to what the guest's
// sysfs then says, in three states: spare slots and no onlining rules
// (warn), a CPU and a DIMM added and left offline (fail), then the
// check's own fixes applied and a second CPU and DIMM added (pass).
// boot is the guest's report from guestcheck.service.
func hotplugScenario(ctx context.Context, t *testing.T, v *VM, boot *Report) {
	qctx, cancel := step(ctx, stepTimeout)
	m, err := dialMonitor(qctx, v.hotplugQMP())
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer m.close()
	blockSize := guestBlockSize(ctx, t, v)

	// 1. Slots to spare, nothing to online what arrives: both warnings,
	// at boot and when run now.
	boots := v.boot.CPUs // CPUs 0 to boots-1 at boot
	wantSpare := cpulist.Format(seq(boots, hotplugMaxCPUs-1))
	now := runHotplug(ctx, t, v)
	for _, r := range []*Report{boot, now} {
		c := expect(t, r, "hotplug", "", "warn")
		expectFinding(t, c, "hotplug-cpus-online", "pass")
		expectFinding(t, c, "hotplug-memory-online", "pass")
		if f := expectFinding(t, c, "hotplug-cpu-not-auto-online", "warn"); f != nil && f.Detail["spare"] != wantSpare {
			t.Errorf("hotplug-cpu-not-auto-online: spare %q, want %q (-smp %d,maxcpus=%d)", f.Detail["spare"], wantSpare, boots, hotplugMaxCPUs)
		}
		// From boot on, before any DIMM: QEMU's ACPI memory hot-plug
		// controller (PNP0A06, _UID "Memory hotplug resources") and a
		// PNP0C80 device per DIMM slot, which Linux lists empty or not.
		if f := expectFinding(t, c, "hotplug-memory-not-auto-online", "warn"); f != nil {
			devs := f.Detail["devices"]
			if !strings.Contains(devs, "ACPI memory hot-plug controller PNP0A06:") || strings.Count(devs, "ACPI memory device PNP0C80:") != hotplugSlots {
				t.Errorf("hotplug-memory-not-auto-online: devices %q, want QEMU's ACPI memory hot-plug controller and %d ACPI memory devices (slots=%d)", devs, hotplugSlots, hotplugSlots)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	cpuFix := remediationLine(t, now.Check("hotplug").Finding("hotplug-cpu-not-auto-online"))
	memFix := remediationLine(t, now.Check("hotplug").Finding("hotplug-memory-not-auto-online"))

	// 2. One CPU and one DIMM, hot-plugged. Neither comes online by
	// itself in Debian 12 (seen: cpuN/online 0, memoryN/state offline):
	// x86 Linux registers a hot-added CPU offline, and only a udev rule
	// would online it, of which Debian's udev ships none (no rule in
	// /usr/lib/udev/rules.d sets a CPU's online or a memory block's
	// state); and Debian's 6.1 cloud kernel leaves
	// CONFIG_MEMORY_HOTPLUG_DEFAULT_ONLINE unset, so auto_online_blocks
	// is "offline" and the DIMM's memory block is created offline as
	// well. The check must fail on both.
	if got := readGuest(ctx, t, v, "/sys/devices/system/memory/auto_online_blocks"); got != "offline" {
		t.Fatalf("auto_online_blocks = %q: this scenario is written for Debian 12's kernel, which leaves hot-added memory offline", got)
	}
	cpu1, block1 := hotplugPair(ctx, t, v, m, "hp1", blockSize)
	if st := readGuest(ctx, t, v, cpuPath(cpu1)+"/online"); st != "0" {
		t.Errorf("hot-added CPU %d: online = %q, want 0 (no rule onlines it yet)", cpu1, st)
	}
	if st := readGuest(ctx, t, v, blockPath(block1)+"/state"); st != "offline" {
		t.Errorf("hot-added %s: state = %q, want offline", block1, st)
	}
	r := runHotplug(ctx, t, v)
	c := expect(t, r, "hotplug", "", "fail")
	cpuOff := expectFinding(t, c, "hotplug-cpu-offline", "fail")
	if cpuOff != nil && cpuOff.Detail["offline"] != strconv.Itoa(cpu1) {
		t.Errorf("hotplug-cpu-offline: offline %q, want %d", cpuOff.Detail["offline"], cpu1)
	}
	memOff := expectFinding(t, c, "hotplug-memory-offline", "fail")
	if memOff != nil && memOff.Detail["offline"] != block1 {
		t.Errorf("hotplug-memory-offline: offline %q, want %s", memOff.Detail["offline"], block1)
	}
	expectFinding(t, c, "hotplug-cpu-not-auto-online", "warn")
	expectFinding(t, c, "hotplug-memory-not-auto-online", "warn")
	if t.Failed() {
		t.FailNow()
	}

	// 3. The check's fixes, as it words them: the udev rules first (for
	// what comes next), then its commands for what is offline now.
	for _, w := range []struct{ file, rule string }{
		{"/etc/udev/rules.d/80-hotplug-cpu.rules", cpuFix},
		{"/etc/udev/rules.d/80-hotplug-memory.rules", memFix},
	} {
		shell(ctx, t, v, `printf '%s\n' "$1" >"$2"`, w.rule, w.file)
		t.Logf("wrote %s: %s", w.file, w.rule)
	}
	shell(ctx, t, v, "udevadm control --reload")
	for _, f := range []*Finding{cpuOff, memOff} {
		cmd := firstCommand(t, f)
		t.Logf("%s: running its fix: %s", f.Code, cmd)
		shell(ctx, t, v, cmd)
	}
	if st := readGuest(ctx, t, v, cpuPath(cpu1)+"/online"); st != "1" {
		t.Errorf("CPU %d after hotplug-cpu-offline's fix: online = %q", cpu1, st)
	}
	if st := readGuest(ctx, t, v, blockPath(block1)+"/state"); st != "online" {
		t.Errorf("%s after hotplug-memory-offline's fix: state = %q", block1, st)
	}
	// A second CPU and DIMM: the rules must online them by themselves.
	cpu2, block2 := hotplugPair(ctx, t, v, m, "hp2", blockSize)
	waitGuest(ctx, t, v, fmt.Sprintf("the udev rule to online CPU %d", cpu2), cpuPath(cpu2)+"/online", "1")
	waitGuest(ctx, t, v, "the udev rule to online "+block2, blockPath(block2)+"/state", "online")
	r = runHotplug(ctx, t, v)
	c = expect(t, r, "hotplug", "", "pass")
	if f := expectFinding(t, c, "hotplug-cpus-online", "pass"); f != nil {
		if want := cpulist.Format(seq(0, boots+1)); f.Detail["present"] != want || f.Detail["online"] != want {
			t.Errorf("hotplug-cpus-online: present %q, online %q, want %s", f.Detail["present"], f.Detail["online"], want)
		}
	}
	expectFinding(t, c, "hotplug-memory-online", "pass")
	if f := expectFinding(t, c, "hotplug-cpu-auto-online", "pass"); f != nil {
		if f.Detail["rule"] != "/etc/udev/rules.d/80-hotplug-cpu.rules:1" || f.Detail["spare"] != cpulist.Format(seq(boots+2, hotplugMaxCPUs-1)) {
			t.Errorf("hotplug-cpu-auto-online: rule %q, spare %q", f.Detail["rule"], f.Detail["spare"])
		}
	}
	if f := expectFinding(t, c, "hotplug-memory-auto-online", "pass"); f != nil && !strings.Contains(f.Detail["by"], "/etc/udev/rules.d/80-hotplug-memory.rules:1") {
		t.Errorf("hotplug-memory-auto-online: by %q, want the rule written", f.Detail["by"])
	}
}

// hotplugPair hot-plugs one CPU and one DIMM (ids prefix-cpu and
// prefix-dimm) and waits until the guest has both in sysfs; it returns
// the guest's number for the CPU and the DIMM's memory block.
func hotplugPair(ctx context.Context, t *testing.T, v *VM, m *monitor, prefix string, blockSize uint64) (int, string) {
	t.Helper()
	before := presentCPUs(ctx, t, v)
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	start := time.Now()
	slot, err := m.addCPU(sctx, prefix+"-cpu")
	if err != nil {
		t.Fatalf("CPU hot-plug: %v", err)
	}
	addr, err := m.addDIMM(sctx, prefix+"-dimm")
	if err != nil {
		t.Fatalf("DIMM hot-plug: %v", err)
	}
	block := fmt.Sprintf("memory%d", addr/blockSize)
	var cpu int
	for {
		if added := missingCPUs(presentCPUs(ctx, t, v), before); len(added) == 1 {
			cpu = added[0]
			break
		} else if len(added) > 1 {
			t.Fatalf("CPUs %v appeared for one hot-plugged CPU", added)
		}
		if sctx.Err() != nil {
			t.Fatalf("CPU %s %v (device_add) never appeared in /sys/devices/system/cpu/present: %v", slot.Type, slot.Props, sctx.Err())
		}
		time.Sleep(time.Second)
	}
	// The kernel marks a hot-added CPU present before it registers the
	// CPU's device, so cpuN/online can be missing for a moment after
	// present lists it; the DIMM's block appears with the CPU or soon
	// after, as the ACPI events are handled in turn.
	for _, p := range []string{cpuPath(cpu) + "/online", blockPath(block) + "/state"} {
		if _, err := v.ReadFile(sctx, p); err != nil {
			waitGuestExists(sctx, t, v, p)
		}
	}
	t.Logf("%s: CPU %s %v is the guest's CPU %d, the DIMM at %#x its %s; both in sysfs %s after device_add",
		prefix, slot.Type, slot.Props, cpu, addr, block, time.Since(start).Round(time.Millisecond))
	return cpu, block
}

func cpuPath(n int) string      { return fmt.Sprintf("/sys/devices/system/cpu/cpu%d", n) }
func blockPath(b string) string { return "/sys/devices/system/memory/" + b }
func seq(from, to int) (out []int) {
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// missingCPUs returns the members of a not in b.
func missingCPUs(a, b []int) (out []int) {
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func presentCPUs(ctx context.Context, t *testing.T, v *VM) []int {
	t.Helper()
	s := readGuest(ctx, t, v, "/sys/devices/system/cpu/present")
	l, p := cpulist.Parse("present", []byte(s))
	if p != nil {
		t.Fatalf("/sys/devices/system/cpu/present: %v", p)
	}
	return l
}

// guestBlockSize is the guest's memory block size (sysfs gives it in hex).
func guestBlockSize(ctx context.Context, t *testing.T, v *VM) uint64 {
	t.Helper()
	s := readGuest(ctx, t, v, "/sys/devices/system/memory/block_size_bytes")
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil || n == 0 {
		t.Fatalf("block_size_bytes %q: %v", s, err)
	}
	return n
}

// waitGuest polls a guest file until it reads want, for at most
// stepTimeout.
func waitGuest(ctx context.Context, t *testing.T, v *VM, what, path, want string) {
	t.Helper()
	sctx, cancel := step(ctx, stepTimeout)
	defer cancel()
	start := time.Now()
	var got string
	for {
		b, err := v.ReadFile(sctx, path)
		got = strings.TrimSpace(string(b))
		if err == nil && got == want {
			t.Logf("%s: %s = %s after %s", what, path, want, time.Since(start).Round(time.Millisecond))
			return
		}
		select {
		case <-sctx.Done():
			t.Fatalf("waiting for %s: %s = %q (%v), want %q", what, path, got, err, want)
		case <-time.After(time.Second):
		}
	}
}

func waitGuestExists(ctx context.Context, t *testing.T, v *VM, path string) {
	t.Helper()
	for {
		_, err := v.ReadFile(ctx, path)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared: %v", path, err)
		case <-time.After(time.Second):
		}
	}
}

// shell runs script with sh -c in the guest (args are $1 and on) and
// fails the test unless it exits 0.
func shell(ctx context.Context, t *testing.T, v *VM, script string, args ...string) {
	t.Helper()
	r := mustExec(ctx, t, v, "/bin/sh", append([]string{"-c", script, "sh"}, args...)...)
	if r.Exit != 0 {
		t.Fatalf("sh -c %q: exit %d\n%s%s", script, r.Exit, r.Stdout, r.Stderr)
	}
}

// runHotplug runs guestcheck's hotplug check in the guest now.
func runHotplug(ctx context.Context, t *testing.T, v *VM) *Report {
	t.Helper()
	res := mustExec(ctx, t, v, "/usr/bin/guestcheck", "--only", "hotplug", "--format", "json")
	r, err := reportv1.Decode([]byte(res.Stdout))
	if err != nil {
		t.Fatalf("guestcheck --only hotplug: exit %d: %v\n%s%s", res.Exit, err, res.Stdout, res.Stderr)
	}
	if c := r.Check("hotplug"); c != nil {
		t.Logf("guestcheck --only hotplug: exit %d: %s", res.Exit, c)
	}
	return &r
}

// remediationLine is the rule a not-auto-online fix says to write: the
// text in backquotes after "holding the line".
func remediationLine(t *testing.T, f *Finding) string {
	t.Helper()
	m := regexp.MustCompile("holding the line `([^`]+)`").FindStringSubmatch(f.Remediation)
	if m == nil {
		t.Fatalf("%s: no rule line in its fix: %q", f.Code, f.Remediation)
	}
	return m[1]
}

// firstCommand is the first command in backquotes of a finding's fix
// (the offline findings' "Bring them online now with `...`").
func firstCommand(t *testing.T, f *Finding) string {
	t.Helper()
	if f == nil {
		t.FailNow()
	}
	m := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(f.Remediation)
	if m == nil {
		t.Fatalf("%s: no command in its fix: %q", f.Code, f.Remediation)
	}
	return m[1]
}
