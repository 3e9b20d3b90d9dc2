// Package hotplug is the hotplug check: a CPU or memory hot-plugged into
// the VM (KubeVirt and Harvester CPU and memory hot-plug, `virsh
// setvcpus --live`, QMP device_add) is only live in the guest once the
// guest has onlined it. It judges what is offline now, and whether what
// the VM can still receive will be onlined when it arrives.
package hotplug

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/parse/cpulist"
	"github.com/guestcheck/guestcheck/internal/parse/udevrules"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check is the hotplug check.
var Check = runner.Check{
	ID:          "hotplug",
	Title:       "CPU and memory hot-plug",
	Description: "every present CPU and memory block is online, and CPUs and memory the VM can still receive (spare CPU slots, memory hot-plug devices) will be onlined when they arrive, by a udev rule, memhp_default_state or the kernel's auto_online_blocks",
	Why: "KubeVirt and Harvester hot-plug CPUs (more sockets, up to `maxSockets`) and memory (up to `maxGuest`) into a running VM, as `virsh setvcpus --live` and QMP `device_add` do on plain KVM and Proxmox. " +
		"The VM's spec then says the change is done, but a hot-added CPU or memory block is created offline unless something in the guest onlines it: a udev rule, the kernel parameter `memhp_default_state`, or the kernel's own `auto_online_blocks` default for memory. " +
		"Without one, the VM runs on its old CPUs and memory while every dashboard shows the new size. This check finds what is offline now, and under `--root` whether a template carries the rules its clones need.",
	Codes: Codes,
	Run:   Run,
}

// The udev rules the not-auto-online fixes tell to write, as udev reads
// them: ATTR{online} is not a placeholder (one never follows a letter),
// so the fix, the reference and explain show the rule as it is written.
const (
	onlineCPURule    = `SUBSYSTEM=="cpu", ACTION=="add", TEST=="online", ATTR{online}=="0", ATTR{online}="1"`
	onlineMemoryRule = `SUBSYSTEM=="memory", ACTION=="add", ATTR{state}=="offline", ATTR{state}="online"`
)

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	codeCPUsOnline = runner.Code{ID: "hotplug-cpus-online", Group: "What is online now", Status: "pass",
		Meaning: "Every present CPU is online. Detail `present`, `possible`, `online`."}
	codeCPUOffline = runner.Code{ID: "hotplug-cpu-offline", Group: "What is online now", Status: "fail, or warn",
		Meaning: "Present CPUs are offline (detail `offline`): a hot-plugged CPU nothing onlined, or one taken offline by hand. The guest does not schedule on them, so the VM has fewer CPUs than its spec says. A warning when SMT is switched off (`nosmt`, detail `smt_control`) and only sibling threads are offline.",
		Fix:     "Bring them online now with `for c in {cpus}; do echo 1 > /sys/devices/system/cpu/cpu$c/online; done`, then add the udev rule of `hotplug-cpu-not-auto-online` so that the next hot-plugged CPU comes online by itself."}
	codeMemoryOnline = runner.Code{ID: "hotplug-memory-online", Group: "What is online now", Status: "pass",
		Meaning: "Every memory block is online. Detail `blocks`, `block_size`."}
	codeMemoryOffline = runner.Code{ID: "hotplug-memory-offline", Group: "What is online now", Status: "fail",
		Meaning: "Memory blocks are offline (detail `offline`): hot-plugged memory nothing onlined. The guest cannot use it, so the VM has less memory than its spec says.",
		Fix:     "Bring them online now with `for b in {blocks}; do echo online > /sys/devices/system/memory/$b/state; done`, then add the udev rule of `hotplug-memory-not-auto-online` so that the next hot-plugged memory comes online by itself."}
	codeNotLive = runner.Code{ID: "hotplug-not-live", Group: "What is online now", Status: "skip",
		Meaning: "Under `--root IMAGE` there are no CPUs or memory blocks to look at: only the onlining rules are judged."}
	codeStateUnreadable = runner.Code{ID: "hotplug-state-unreadable", Group: "What is online now", Status: "error",
		Meaning: "`/sys/devices/system/cpu` (or its `present`, `online` and `possible` lists) cannot be read or parsed. Detail `error`.",
		Fix:     "Check that sysfs is mounted on `/sys` (`mount -t sysfs sysfs /sys`) and run guestcheck on the guest itself, not in a container that hides it."}

	codeCPUAutoOnline = runner.Code{ID: "hotplug-cpu-auto-online", Group: "What arrives later", Status: "pass",
		Meaning: "A udev rule onlines hot-added CPUs (detail `rule`, its file and line), and the VM has spare CPU slots (detail `spare`) or this is an image."}
	codeCPUNotAutoOnline = runner.Code{ID: "hotplug-cpu-not-auto-online", Group: "What arrives later", Status: "warn",
		Meaning: "The VM can receive more CPUs (detail `spare`: possible CPUs beyond the present ones), or under `--root` the template's clones may, but no udev rule onlines a hot-added CPU: a KubeVirt or Harvester CPU hot-plug (more sockets) or `virsh setvcpus --live` adds CPUs that stay offline.",
		Fix:     "Create `/etc/udev/rules.d/80-hotplug-cpu.rules` holding the line `" + onlineCPURule + "` (then `udevadm control --reload`).",
		RootFix: "Create `/etc/udev/rules.d/80-hotplug-cpu.rules` in the image holding the line `" + onlineCPURule + "`, so that every clone onlines hot-added CPUs."}
	codeCPUNoSlots = runner.Code{ID: "hotplug-cpu-no-slots", Group: "What arrives later", Status: "skip",
		Meaning: "Every possible CPU is present: this VM cannot receive a CPU without a restart, so there is nothing to online later."}
	codeMemoryAutoOnline = runner.Code{ID: "hotplug-memory-auto-online", Group: "What arrives later", Status: "pass",
		Meaning: "Hot-added memory is onlined when it arrives: detail `by` names the udev rule (file and line), the `memhp_default_state` kernel parameter or the kernel's `auto_online_blocks` setting that does it."}
	codeMemoryNotAutoOnline = runner.Code{ID: "hotplug-memory-not-auto-online", Group: "What arrives later", Status: "warn",
		Meaning: "The VM can receive memory (detail `devices`: ACPI memory hot-plug slots or virtio-mem devices), or under `--root` the template's clones may, but nothing onlines it: `auto_online_blocks` is `offline`, no `memhp_default_state` on the kernel command line and no udev rule. A KubeVirt or Harvester memory hot-plug, or a DIMM added with QMP `device_add`, stays offline.",
		Fix:     "Create `/etc/udev/rules.d/80-hotplug-memory.rules` holding the line `" + onlineMemoryRule + "` (then `udevadm control --reload`), or boot with `memhp_default_state=online`.",
		RootFix: "Create `/etc/udev/rules.d/80-hotplug-memory.rules` in the image holding the line `" + onlineMemoryRule + "`, or add `memhp_default_state=online` to its kernel command line, so that every clone onlines hot-added memory."}
	codeMemoryNoSlots = runner.Code{ID: "hotplug-memory-no-slots", Group: "What arrives later", Status: "skip",
		Meaning: "The VM has no memory hot-plug slot and no virtio-mem device (or the kernel has no memory hot-plug): it cannot receive memory without a restart, so there is nothing to online later."}
	codeRulesInvalid = runner.Code{ID: "hotplug-rules-invalid", Group: "What arrives later", Status: "warn",
		Meaning: "A line of a udev rules file is not a rule udev reads (detail `problems`, file and line each); udev skips it, so a rule written there does nothing.",
		Fix:     "Correct or remove the lines named in {problems}; `udevadm verify` (systemd 254 and later) checks a rules file."}
)

// Codes lists every code Run can emit.
var Codes = []runner.Code{
	codeCPUsOnline, codeCPUOffline, codeMemoryOnline, codeMemoryOffline, codeNotLive, codeStateUnreadable,
	codeCPUAutoOnline, codeCPUNotAutoOnline, codeCPUNoSlots, codeMemoryAutoOnline, codeMemoryNotAutoOnline, codeMemoryNoSlots, codeRulesInvalid,
}

// Paths the check reads, as the guest names them.
const (
	cpuDir      = "/sys/devices/system/cpu"
	memoryDir   = "/sys/devices/system/memory"
	acpiDevices = "/sys/bus/acpi/devices"
	virtioDevs  = "/sys/bus/virtio/devices"
)

// ruleDirs are udev's rule directories, in the order a file name in an
// earlier one hides the same name in a later one.
var ruleDirs = []string{"/etc/udev/rules.d", "/run/udev/rules.d", "/usr/local/lib/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"}

// maxRuleFile bounds one rules file: real ones are a few KiB.
const maxRuleFile = 1 << 20

// Facts is what the check judges.
type Facts struct {
	Live          bool
	NotLiveReason string
	// Present, Possible and Online are the CPU lists; CPUErr says why
	// they could not be read.
	Present, Possible, Online []int
	CPUErr                    error
	// SMTControl is /sys/devices/system/cpu/smt/control ("on", "off",
	// "forceoff", "notsupported"), "" when absent.
	SMTControl string
	// Blocks maps each memory block (memory32) to its state; nil when the
	// kernel has no memory hot-plug (no /sys/devices/system/memory).
	Blocks    map[string]string
	BlockSize string
	// AutoOnline is /sys/devices/system/memory/auto_online_blocks.
	AutoOnline string
	// MemDevices names what can bring memory later: ACPI memory devices
	// and hot-plug controllers, virtio-mem devices.
	MemDevices []string
	// CPURule and MemRule are the file:line of a udev rule that onlines
	// a hot-added CPU or memory block, "" when none does.
	CPURule, MemRule string
	// MemCmdline is where memhp_default_state=online* is set, "" when not.
	MemCmdline string
	// RuleProblems are the rules files' lines udev would not read.
	RuleProblems []string
	// KernelDefault is, under an image root, where the image's kernel
	// build onlines hot-added memory by default ("" when it does not);
	// on the running system auto_online_blocks says it.
	KernelDefault string
}

// Run is the hotplug check.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	return Judge(Gather(ctx, env))
}

// Gather reads the facts through env.Root: sysfs on the running system,
// the rules and boot configuration in any root.
func Gather(ctx context.Context, env *runner.Env) Facts {
	f := Facts{Live: env.Live}
	r := env.Root
	f.CPURule, f.MemRule, f.RuleProblems = readRules(ctx, r)
	for _, c := range identity.ReadCmdlines(r) {
		if v := memhpState(c.Args); strings.HasPrefix(v, "online") {
			f.MemCmdline = c.Source + ": memhp_default_state=" + v
		}
	}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
		f.KernelDefault = kernelDefault(ctx, r)
		return f
	}
	if args, err := identity.ReadRunningCmdline(r); err == nil {
		if v := memhpState(args); strings.HasPrefix(v, "online") {
			f.MemCmdline = identity.RunningCmdlinePath + ": memhp_default_state=" + v
		} else {
			f.MemCmdline = "" // the running kernel's line is the one that counts
		}
	}
	f.Present, f.Possible, f.Online, f.CPUErr = readCPUs(r)
	f.SMTControl = readLine(r, cpuDir+"/smt/control")
	f.Blocks, f.BlockSize, f.AutoOnline = readMemory(ctx, r)
	f.MemDevices = memoryDevices(ctx, r)
	return f
}

// readCPUs reads the present, possible and online CPU lists.
func readCPUs(r *fs.Root) (present, possible, online []int, err error) {
	lists := make([][]int, 3)
	for i, name := range []string{"present", "possible", "online"} {
		b, rerr := r.ReadFileLimit(cpuDir+"/"+name, 64<<10)
		if rerr != nil {
			return nil, nil, nil, rerr
		}
		l, p := cpulist.Parse(cpuDir+"/"+name, b)
		if p != nil {
			return nil, nil, nil, fmt.Errorf("%s", p.String())
		}
		lists[i] = l
	}
	return lists[0], lists[1], lists[2], nil
}

// readMemory reads each memory block's state, the block size and the
// kernel's onlining default. Blocks is nil without memory hot-plug.
func readMemory(ctx context.Context, r *fs.Root) (map[string]string, string, string) {
	names, err := r.ReadDirNames(memoryDir)
	if err != nil {
		return nil, "", ""
	}
	blocks := map[string]string{}
	for _, n := range names {
		if ctx.Err() != nil {
			break
		}
		if strings.HasPrefix(n, "memory") && strings.Trim(n[len("memory"):], "0123456789") == "" {
			blocks[n] = readLine(r, memoryDir+"/"+n+"/state")
		}
	}
	return blocks, readLine(r, memoryDir+"/block_size_bytes"), readLine(r, memoryDir+"/auto_online_blocks")
}

// memoryDevices names what can bring memory to the VM later: ACPI memory
// devices (PNP0C80: QEMU declares one per DIMM slot, and Linux lists
// each, plugged or empty, from boot on), QEMU's
// ACPI memory hot-plug controller (a container whose _UID says so) and
// virtio-mem devices (virtio device ID 24, KubeVirt's memory hot-plug).
func memoryDevices(ctx context.Context, r *fs.Root) []string {
	var out []string
	names, _ := r.ReadDirNames(acpiDevices)
	for _, n := range names {
		switch {
		case strings.HasPrefix(n, "PNP0C80:"):
			out = append(out, "ACPI memory device "+n)
		case strings.HasPrefix(n, "PNP0A06:") && strings.Contains(readLine(r, acpiDevices+"/"+n+"/uid"), "Memory hotplug"):
			out = append(out, "ACPI memory hot-plug controller "+n)
		}
	}
	names, _ = r.ReadDirNames(virtioDevs)
	for _, n := range names {
		if ctx.Err() != nil {
			break
		}
		if readLine(r, virtioDevs+"/"+n+"/device") == "0x0018" {
			out = append(out, "virtio-mem device "+n)
		}
	}
	slices.Sort(out)
	return out
}

// kernelDefault is where an image's kernel build (its last
// /boot/config-VERSION by name) onlines hot-added memory by default: a
// config with CONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE* (Linux 6.14 and
// later) or CONFIG_MEMORY_HOTPLUG_DEFAULT_ONLINE (before); "" when not.
func kernelDefault(ctx context.Context, r *fs.Root) string {
	names, _ := r.ReadDirNames("/boot")
	var configs []string
	for _, n := range names {
		if strings.HasPrefix(n, "config-") {
			configs = append(configs, n)
		}
	}
	if len(configs) == 0 || ctx.Err() != nil {
		return ""
	}
	slices.Sort(configs)
	p := "/boot/" + configs[len(configs)-1]
	b, err := r.ReadFileLimit(p, 4<<20)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(l, "=y") && (l == "CONFIG_MEMORY_HOTPLUG_DEFAULT_ONLINE=y" || strings.HasPrefix(l, "CONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE")) {
			return p + ": " + l
		}
	}
	return ""
}

// readLine is a small sysfs file's first line, "" when it cannot be read.
func readLine(r *fs.Root, p string) string {
	b, err := r.ReadFileLimit(p, 4096)
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(first)
}

// memhpState is the value of the last memhp_default_state= on a kernel
// command line (the kernel's parser keeps the last), "" when absent.
func memhpState(cmdline string) string {
	v := ""
	for _, w := range strings.Fields(cmdline) {
		if s, ok := strings.CutPrefix(w, "memhp_default_state="); ok {
			v = s
		}
	}
	return v
}

// readRules finds the first rule, in udev's order, that onlines a
// hot-added CPU and one that onlines a memory block. A file name in an
// earlier directory hides the same name in a later one, as udev does.
func readRules(ctx context.Context, r *fs.Root) (cpuRule, memRule string, probs []string) {
	files := map[string]string{}
	for _, dir := range ruleDirs {
		names, _ := r.ReadDirNames(dir)
		for _, n := range names {
			if _, hidden := files[n]; !hidden && strings.HasSuffix(n, ".rules") {
				files[n] = path.Join(dir, n)
			}
		}
	}
	order := make([]string, 0, len(files))
	for n := range files {
		order = append(order, n)
	}
	slices.Sort(order) // udev reads rules files in name order
	for _, n := range order {
		if ctx.Err() != nil {
			break
		}
		b, err := r.ReadFileLimit(files[n], maxRuleFile)
		if err != nil {
			continue
		}
		lines, ps := udevrules.ParseLines(files[n], b)
		for _, p := range ps {
			probs = append(probs, p.String())
		}
		for _, l := range lines {
			if cpuRule == "" && onlines(l, "cpu", "ATTR{online}", "1") {
				cpuRule = l.At
			}
			if memRule == "" && onlines(l, "memory", "ATTR{state}", "online", "online_movable", "online_kernel") {
				memRule = l.At
			}
		}
	}
	return cpuRule, memRule, probs
}

// onlines reports whether rule l assigns attr one of values to devices of
// subsystem on "add" (or on any action, when it names none).
func onlines(l udevrules.Line, subsystem, attr string, values ...string) bool {
	sub, ok := l.Get("SUBSYSTEM", "==")
	if !ok || sub != subsystem {
		return false
	}
	if act, ok := l.Get("ACTION", "=="); ok && act != "add" {
		return false
	}
	v, ok := l.Get(attr, "=")
	return ok && slices.Contains(values, v)
}

// Judge turns the facts into findings. It does no I/O.
func Judge(f Facts) []runner.Finding {
	var out []runner.Finding
	if !f.Live {
		out = append(out, runner.Skipf(codeNotLive.ID, "CPUs and memory blocks not checked: "+f.NotLiveReason, nil))
	} else if f.CPUErr != nil {
		out = append(out, codeStateUnreadable.New(runner.Error, "cannot read the CPU lists", map[string]string{"error": f.CPUErr.Error()}, codeStateUnreadable.Fixf()))
	} else {
		out = append(out, judgeCPUsNow(f), judgeMemoryNow(f))
	}
	out = append(out, judgeCPUsLater(f), judgeMemoryLater(f))
	if len(f.RuleProblems) > 0 {
		ps := strings.Join(f.RuleProblems, "; ")
		out = append(out, codeRulesInvalid.New(runner.Warn, fmt.Sprintf("%d udev rule lines are not rules udev reads", len(f.RuleProblems)),
			map[string]string{"problems": ps}, codeRulesInvalid.Fixf("problems", ps)))
	}
	return out
}

// missing returns the members of want that have is lacks.
func missing(want, have []int) []int {
	var out []int
	for _, c := range want {
		if !slices.Contains(have, c) {
			out = append(out, c)
		}
	}
	return out
}

func judgeCPUsNow(f Facts) runner.Finding {
	d := map[string]string{"present": cpulist.Format(f.Present), "possible": cpulist.Format(f.Possible), "online": cpulist.Format(f.Online)}
	off := missing(f.Present, f.Online)
	if len(off) == 0 {
		return runner.Passf(codeCPUsOnline.ID, fmt.Sprintf("all %d present CPUs are online", len(f.Present)), d)
	}
	d = runner.Detail(d, "offline", cpulist.Format(off), "smt_control", f.SMTControl)
	st := runner.Fail
	if f.SMTControl == "off" || f.SMTControl == "forceoff" {
		st = runner.Warn
	}
	words := make([]string, len(off))
	for i, c := range off {
		words[i] = fmt.Sprint(c)
	}
	return codeCPUOffline.New(st, fmt.Sprintf("%d of %d present CPUs are offline (CPU %s)", len(off), len(f.Present), cpulist.Format(off)),
		d, codeCPUOffline.Fixf("cpus", strings.Join(words, " ")))
}

func judgeMemoryNow(f Facts) runner.Finding {
	d := map[string]string{"blocks": fmt.Sprint(len(f.Blocks)), "block_size": f.BlockSize}
	var off []string
	for n, st := range f.Blocks {
		if st != "online" {
			off = append(off, n)
		}
	}
	if len(off) == 0 {
		return runner.Passf(codeMemoryOnline.ID, fmt.Sprintf("all %d memory blocks are online", len(f.Blocks)), d)
	}
	slices.SortFunc(off, func(a, b string) int { return cmpBlock(a, b) })
	d["offline"] = strings.Join(off, ",")
	return codeMemoryOffline.New(runner.Fail, fmt.Sprintf("%d of %d memory blocks are offline (%s)", len(off), len(f.Blocks), shortList(off)),
		d, codeMemoryOffline.Fixf("blocks", strings.Join(off, " ")))
}

// cmpBlock orders memory9 before memory10.
func cmpBlock(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// shortList names at most four items, then how many more.
func shortList(items []string) string {
	if len(items) <= 4 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:4], ", "), len(items)-4)
}

func judgeCPUsLater(f Facts) runner.Finding {
	spare := missing(f.Possible, f.Present)
	d := runner.Detail(nil, "spare", cpulist.Format(spare), "rule", f.CPURule)
	switch {
	case f.Live && f.CPUErr == nil && len(spare) == 0:
		return runner.Skipf(codeCPUNoSlots.ID, fmt.Sprintf("all %d possible CPUs are present: no CPU can be hot-added", len(f.Possible)), d)
	case f.CPURule != "":
		return runner.Passf(codeCPUAutoOnline.ID, "hot-added CPUs are onlined by the udev rule at "+f.CPURule, d)
	case !f.Live:
		return codeCPUNotAutoOnline.New(runner.Warn, "no udev rule onlines hot-added CPUs: a clone's CPU hot-plug would leave the new CPUs offline",
			d, codeCPUNotAutoOnline.FixOn(false))
	}
	if f.CPUErr != nil {
		return runner.Skipf(codeCPUNoSlots.ID, "the CPU lists could not be read, so spare CPU slots are unknown", d)
	}
	return codeCPUNotAutoOnline.New(runner.Warn, fmt.Sprintf("%d CPUs can be hot-added (CPU %s) but no udev rule onlines them", len(spare), cpulist.Format(spare)),
		d, codeCPUNotAutoOnline.FixOn(true))
}

func judgeMemoryLater(f Facts) runner.Finding {
	d := runner.Detail(nil, "devices", strings.Join(f.MemDevices, ", "), "auto_online_blocks", f.AutoOnline)
	by := f.MemRule
	switch {
	case by != "":
		by = "the udev rule at " + by
	case f.MemCmdline != "":
		by = f.MemCmdline
	case f.Live && strings.HasPrefix(f.AutoOnline, "online"):
		by = memoryDir + "/auto_online_blocks: " + f.AutoOnline
	case !f.Live && f.KernelDefault != "":
		by = f.KernelDefault
	}
	d = runner.Detail(d, "by", by)
	switch {
	case f.Live && (f.Blocks == nil || len(f.MemDevices) == 0):
		return runner.Skipf(codeMemoryNoSlots.ID, "no memory hot-plug slot or virtio-mem device: no memory can be hot-added", d)
	case by != "":
		return runner.Passf(codeMemoryAutoOnline.ID, "hot-added memory is onlined by "+by, d)
	case !f.Live:
		return codeMemoryNotAutoOnline.New(runner.Warn, "nothing onlines hot-added memory: a clone's memory hot-plug would leave the new memory offline",
			d, codeMemoryNotAutoOnline.FixOn(false))
	}
	return codeMemoryNotAutoOnline.New(runner.Warn, fmt.Sprintf("memory can be hot-added (%s) but nothing onlines it", shortList(f.MemDevices)),
		d, codeMemoryNotAutoOnline.FixOn(true))
}
