package hotplug

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/udevrules"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

const (
	cpuRule = `SUBSYSTEM=="cpu", ACTION=="add", TEST=="online", ATTR{online}=="0", ATTR{online}="1"`
	memRule = `SUBSYSTEM=="memory", ACTION=="add", ATTR{state}=="offline", ATTR{state}="online"`
)

// live is a running VM with 2 of 4 possible CPUs, 4 memory blocks and an
// ACPI memory hot-plug controller, everything online and no rule.
func live() Facts {
	return Facts{Live: true, Present: []int{0, 1}, Possible: []int{0, 1, 2, 3}, Online: []int{0, 1},
		Blocks:     map[string]string{"memory0": "online", "memory1": "online", "memory9": "online", "memory10": "online"},
		AutoOnline: "offline", MemDevices: []string{"ACPI memory hot-plug controller PNP0A06:00"}}
}

func TestJudge(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*Facts)
		want map[string]runner.Status
		fix  map[string]string // code -> text its remediation holds
	}{
		"all online, nothing onlines what comes": {func(*Facts) {},
			map[string]runner.Status{"hotplug-cpus-online": runner.Pass, "hotplug-memory-online": runner.Pass,
				"hotplug-cpu-not-auto-online": runner.Warn, "hotplug-memory-not-auto-online": runner.Warn},
			map[string]string{"hotplug-cpu-not-auto-online": "80-hotplug-cpu.rules", "hotplug-memory-not-auto-online": "memhp_default_state=online"}},
		"a hot-added CPU left offline": {func(f *Facts) { f.Present = []int{0, 1, 2} },
			map[string]runner.Status{"hotplug-cpu-offline": runner.Fail},
			map[string]string{"hotplug-cpu-offline": "for c in 2; do echo 1 > /sys/devices/system/cpu/cpu$c/online"}},
		"nosmt siblings offline": {func(f *Facts) { f.Present, f.SMTControl = []int{0, 1, 2, 3}, "forceoff" },
			map[string]runner.Status{"hotplug-cpu-offline": runner.Warn, "hotplug-cpu-no-slots": runner.Skip}, nil},
		"hot-added memory left offline": {func(f *Facts) { f.Blocks["memory10"], f.Blocks["memory11"] = "offline", "offline" },
			map[string]runner.Status{"hotplug-memory-offline": runner.Fail},
			map[string]string{"hotplug-memory-offline": "for b in memory10 memory11; do echo online > /sys/devices/system/memory/$b/state"}},
		"rules online both": {func(f *Facts) {
			f.CPURule, f.MemRule = "/etc/udev/rules.d/80-h.rules:1", "/etc/udev/rules.d/80-h.rules:2"
		},
			map[string]runner.Status{"hotplug-cpu-auto-online": runner.Pass, "hotplug-memory-auto-online": runner.Pass}, nil},
		"the kernel onlines memory": {func(f *Facts) { f.AutoOnline = "online_movable" },
			map[string]runner.Status{"hotplug-memory-auto-online": runner.Pass}, nil},
		"memhp_default_state": {func(f *Facts) { f.MemCmdline = "/proc/cmdline: memhp_default_state=online" },
			map[string]runner.Status{"hotplug-memory-auto-online": runner.Pass}, nil},
		"no slots": {func(f *Facts) { f.Possible, f.MemDevices = f.Present, nil },
			map[string]runner.Status{"hotplug-cpu-no-slots": runner.Skip, "hotplug-memory-no-slots": runner.Skip}, nil},
		"no sysfs": {func(f *Facts) { f.CPUErr = os.ErrNotExist },
			map[string]runner.Status{"hotplug-state-unreadable": runner.Error}, nil},
		"template without rules": {func(f *Facts) { *f = Facts{NotLiveReason: "image"} },
			map[string]runner.Status{"hotplug-not-live": runner.Skip, "hotplug-cpu-not-auto-online": runner.Warn, "hotplug-memory-not-auto-online": runner.Warn},
			map[string]string{"hotplug-cpu-not-auto-online": "in the image", "hotplug-memory-not-auto-online": "every clone"}},
		"template whose kernel onlines memory": {func(f *Facts) {
			*f = Facts{KernelDefault: "/boot/config-6.12: CONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE_AUTO=y", CPURule: "/usr/lib/udev/rules.d/40-vm.rules:3"}
		},
			map[string]runner.Status{"hotplug-cpu-auto-online": runner.Pass, "hotplug-memory-auto-online": runner.Pass}, nil},
		"a broken rules line": {func(f *Facts) { f.RuleProblems = []string{"/etc/udev/rules.d/x.rules:3: expected pairs"} },
			map[string]runner.Status{"hotplug-rules-invalid": runner.Warn},
			map[string]string{"hotplug-rules-invalid": "x.rules:3"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := live()
			tc.edit(&f)
			got := Judge(f)
			checktest.Conventions(t, got, Codes)
			for code, st := range tc.want {
				fd := checktest.Want(t, got, code, st)
				if want := tc.fix[code]; !strings.Contains(fd.Remediation, want) {
					t.Errorf("%s: remediation %q lacks %q", code, fd.Remediation, want)
				}
			}
		})
	}
}

// TestFixRules: the rule each not-auto-online fix names reaches the
// remediation and the reference as written, udev's ATTR{...} keys
// included (once they came out as ATTRONLINE, a line udev does not
// read), on a running system and under --root; and it is a rule this
// check itself takes for one that onlines.
func TestFixRules(t *testing.T) {
	for _, tc := range []struct {
		code, rule, subsystem, attr string
		values                      []string
	}{
		{"hotplug-cpu-not-auto-online", cpuRule, "cpu", "ATTR{online}", []string{"1"}},
		{"hotplug-memory-not-auto-online", memRule, "memory", "ATTR{state}", []string{"online"}},
	} {
		for _, f := range []Facts{live(), {NotLiveReason: "image"}} {
			fd := checktest.Want(t, Judge(f), tc.code, runner.Warn)
			if !strings.Contains(fd.Remediation, "holding the line `"+tc.rule+"`") {
				t.Errorf("%s (live %v): remediation %q does not hold the rule %s", tc.code, f.Live, fd.Remediation, tc.rule)
			}
		}
		lines, probs := udevrules.ParseLines("80-hotplug.rules", []byte(tc.rule+"\n"))
		if len(lines) != 1 || len(probs) != 0 || !onlines(lines[0], tc.subsystem, tc.attr, tc.values...) {
			t.Errorf("%s: the fix's rule is not one the check recognises: %v %v", tc.code, lines, probs)
		}
		i := slices.IndexFunc(Codes, func(c runner.Code) bool { return c.ID == tc.code })
		if !strings.Contains(runner.Metavars(Codes[i].Fix), tc.rule) || !strings.Contains(runner.Metavars(Codes[i].RootFix), tc.rule) {
			t.Errorf("%s: the reference does not show the rule %s", tc.code, tc.rule)
		}
	}
}

// tree writes files under a new directory and opens it as a root.
func tree(t *testing.T, files map[string]string) *fs.Root {
	t.Helper()
	dir := t.TempDir()
	for p, body := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestGather reads a sysfs and rules tree laid out as a VM's after a CPU
// and a DIMM were hot-plugged and only the DIMM was onlined.
func TestGather(t *testing.T) {
	r := tree(t, map[string]string{
		"sys/devices/system/cpu/present":               "0-1\n",
		"sys/devices/system/cpu/possible":              "0-3\n",
		"sys/devices/system/cpu/online":                "0\n",
		"sys/devices/system/memory/memory0/state":      "online\n",
		"sys/devices/system/memory/memory40/state":     "online\n",
		"sys/devices/system/memory/auto_online_blocks": "offline\n",
		"sys/devices/system/memory/block_size_bytes":   "8000000\n",
		"sys/bus/acpi/devices/PNP0C80:00/uid":          "0\n",
		"sys/bus/virtio/devices/virtio3/device":        "0x0018\n",
		"sys/bus/virtio/devices/virtio1/device":        "0x0003\n",
		"proc/cmdline":                                 "root=/dev/vda1 ro memhp_default_state=offline\n",
		"etc/udev/rules.d/80-mem.rules":                "# memory\n" + memRule + "\nnot a rule\n",
		"usr/lib/udev/rules.d/80-mem.rules":            cpuRule + "\n", // hidden by /etc's file of that name
		"etc/kernel/cmdline":                           "memhp_default_state=online\n",
	})
	f := Gather(context.Background(), &runner.Env{Root: r, Live: true})
	if f.CPUErr != nil || len(f.Present) != 2 || len(f.Possible) != 4 || len(f.Online) != 1 {
		t.Fatalf("CPUs: %+v", f)
	}
	if f.CPURule != "" || f.MemRule != "/etc/udev/rules.d/80-mem.rules:2" || len(f.RuleProblems) != 1 {
		t.Errorf("rules: cpu %q mem %q problems %v", f.CPURule, f.MemRule, f.RuleProblems)
	}
	if f.MemCmdline != "" {
		t.Errorf("the running kernel's command line counts, not the image's: %q", f.MemCmdline)
	}
	if strings.Join(f.MemDevices, ";") != "ACPI memory device PNP0C80:00;virtio-mem device virtio3" {
		t.Errorf("memory devices: %q", f.MemDevices)
	}
	got := Judge(f)
	checktest.Conventions(t, got, Codes)
	checktest.Want(t, got, "hotplug-cpu-offline", runner.Fail, "CPU 1")
	checktest.Want(t, got, "hotplug-memory-auto-online", runner.Pass, "80-mem.rules:2")

	img := Gather(context.Background(), &runner.Env{Root: r, Live: false, Config: nil})
	if img.MemCmdline != "/etc/kernel/cmdline: memhp_default_state=online" || img.Present != nil {
		t.Errorf("under --root: %+v", img)
	}
}

// TestTemplateKernelDefault: under --root, the image's kernel config
// says whether hot-added memory comes online by itself.
func TestTemplateKernelDefault(t *testing.T) {
	r := tree(t, map[string]string{
		"boot/config-6.1.0-9-cloud-amd64":  "CONFIG_MEMORY_HOTPLUG=y\n# CONFIG_MEMORY_HOTPLUG_DEFAULT_ONLINE is not set\n",
		"boot/config-6.12.0-1-cloud-amd64": "CONFIG_MEMORY_HOTPLUG=y\nCONFIG_MHP_DEFAULT_ONLINE_TYPE_ONLINE_AUTO=y\n",
	})
	got := Judge(Gather(context.Background(), &runner.Env{Root: r}))
	checktest.Want(t, got, "hotplug-memory-auto-online", runner.Pass, "config-6.12.0-1-cloud-amd64")
	checktest.Want(t, got, "hotplug-cpu-not-auto-online", runner.Warn)
}

// TestThisMachine runs the check on the machine the tests run on: it must
// answer with the check's own codes whatever the machine is.
func TestThisMachine(t *testing.T) {
	r, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	checktest.Conventions(t, Run(context.Background(), &runner.Env{Root: r, Live: true}), Codes)
}
