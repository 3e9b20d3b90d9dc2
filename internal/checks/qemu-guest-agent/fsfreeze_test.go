package guestagent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// agentReady are the files of a KubeVirt guest with qemu-ga installed and
// its channel present; freezeRoot adds them unless the test overrides one
// (an empty value deletes it).
var agentReady = map[string]string{
	"/sys/class/dmi/id/sys_vendor":          "KubeVirt\n",
	"/usr/sbin/qemu-ga":                     "ELF QEMU Guest Agent 7.2.22",
	"/sys/class/virtio-ports/vport2p1/name": "org.qemu.guest_agent.0\n",
	"/sys/class/virtio-ports/vport1p1/name": "org.qemu.console.0\n",
	"/sys/module/virtio_console/initstate":  "live\n",
}

func freezeRoot(t *testing.T, mountinfo string, files map[string]string) *runner.Env {
	t.Helper()
	dir := t.TempDir()
	files["/proc/self/mountinfo"] = mountinfo
	for p, c := range agentReady {
		if _, ok := files[p]; !ok {
			files[p] = c
		}
	}
	for p, c := range files {
		if c == "" {
			continue
		}
		full := filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &runner.Env{Root: root, Live: true, Now: time.Now}
}

// fsFreezeCheck and agentCheck are the registry's fs-freeze and
// qemu-guest-agent checks, for runner.Run.
var (
	fsFreezeCheck = runner.Check{ID: "fs-freeze", Title: "fs-freeze", Codes: FSFreezeCodes, Run: RunFSFreeze}
	agentCheck    = runner.Check{ID: "qemu-guest-agent", Title: "qemu-guest-agent", Codes: Codes, Run: Run}
)

func TestFSFreezeList(t *testing.T) {
	env := freezeRoot(t, `20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw
21 20 254:2 / /boot/efi rw shared:3 - vfat /dev/vda2 rw
23 20 254:16 / /data rw shared:4 - xfs /dev/vdb rw
27 23 7:0 / /data/img rw shared:7 - ext4 /dev/loop0 rw
`, map[string]string{"/sys/block/loop0/loop/backing_file": "/data/images/disk.img\n"})
	got := index(RunFSFreeze(context.Background(), env))
	if f := got[codeFreezeListOK]; f.Status != runner.Pass || f.Detail["freeze_order"] != "/data/img,/data,/" {
		t.Errorf("list = %+v", f)
	}
	if f := got[codeFreezeMountSkipped]; f.Status != runner.Pass || f.Detail["mountpoint"] != "/boot/efi" {
		t.Errorf("skipped = %+v", f)
	}
	if f := got[codeFreezeLoopBacked]; f.Status != runner.Warn || f.Detail["backing_mount"] != "/data" || f.Remediation == "" {
		t.Errorf("loop = %+v", f)
	}
	if _, ok := got[codeFreezeRootUnfreez]; ok {
		t.Error("ext4 root reported unfreezable")
	}
}

func TestFSFreezeRootUnfreezable(t *testing.T) {
	for _, mi := range []string{
		"20 1 0:30 / / rw shared:1 - overlay overlay rw\n",
		"20 1 254:1 / / ro shared:1 - squashfs /dev/vda1 ro\n",
	} {
		got := index(RunFSFreeze(context.Background(), freezeRoot(t, mi, map[string]string{})))
		if f := got[codeFreezeRootUnfreez]; f.Status != runner.Fail || f.Remediation == "" {
			t.Errorf("%q: %+v", mi, got)
		}
	}
}

func TestFSFreezeNotLiveAndRefused(t *testing.T) {
	env := freezeRoot(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{})
	env.Live = false
	if got := index(RunFSFreeze(context.Background(), env)); got[codeFreezeNotLive].Status != runner.Skip {
		t.Errorf("not live: %v", got)
	}
	env.Live = true
	// Under an image root the active test is refused, never attempted.
	env.FreezeTest = &runner.FreezeTest{Mountpoint: "/data"}
	if got := index(RunFSFreeze(context.Background(), env)); got[codeFreezeTestRefused].Status != runner.Error {
		t.Errorf("refused: %v", got)
	}
}

// TestFSFreezeNeedsAnAgent: on a QEMU/KVM guest without an agent or without
// the guest-agent channel no freeze ever happens, whatever the
// filesystems: a failure naming the reason and its fix, never a pass.
func TestFSFreezeNeedsAnAgent(t *testing.T) {
	const mi = "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		fails []string
		fix   string
	}{
		{"no-agent", map[string]string{"/usr/sbin/qemu-ga": ""}, []string{codeFreezeNoAgent}, "install the qemu-guest-agent package"},
		{"no-channel", map[string]string{"/sys/class/virtio-ports/vport2p1/name": ""}, []string{codeFreezeNoChannel}, "name='org.qemu.guest_agent.0'"},
		{"neither", map[string]string{"/usr/sbin/qemu-ga": "", "/sys/class/virtio-ports/vport2p1/name": "", "/sys/class/virtio-ports/vport1p1/name": ""},
			[]string{codeFreezeNoAgent, codeFreezeNoChannel}, "virtserialport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := freezeRoot(t, mi, tc.files)
			r := runner.Run(context.Background(), []runner.Check{fsFreezeCheck}, env, runner.RunOptions{})[0]
			var fails []string
			for _, f := range r.Findings {
				if f.Status == runner.Fail {
					fails = append(fails, f.Code)
					if f.Remediation == "" || f.Detail["freeze_order"] != "/" {
						t.Errorf("%s: remediation %q, freeze_order %q", f.Code, f.Remediation, f.Detail["freeze_order"])
					}
				}
			}
			if r.Status != runner.Fail || strings.Join(fails, ",") != strings.Join(tc.fails, ",") {
				t.Fatalf("%s %q with failures %v, want fail with %v: %+v", r.Status, r.Summary, fails, tc.fails, r.Findings)
			}
			if last := index(r.Findings)[tc.fails[len(tc.fails)-1]]; !strings.Contains(last.Remediation, tc.fix) {
				t.Errorf("%s's fix %q lacks %q", last.Code, last.Remediation, tc.fix)
			}
			if f := index(r.Findings)[codeFreezeListOK]; !strings.Contains(f.Message, "would freeze 1 filesystem(s) once it can run") {
				t.Errorf("list = %+v", f)
			}
		})
	}
	// With agent and channel the same root passes.
	r := runner.Run(context.Background(), []runner.Check{fsFreezeCheck}, freezeRoot(t, mi, map[string]string{}), runner.RunOptions{})[0]
	if r.Status != runner.Pass || r.Summary != "qemu-ga will freeze 1 filesystem(s): /" {
		t.Errorf("ready guest: %s %q", r.Status, r.Summary)
	}
}

// TestFSFreezeNotQEMU: where no guest-agent channel can exist (another
// hypervisor, bare metal) qemu-ga never freezes: a skip saying so.
func TestFSFreezeNotQEMU(t *testing.T) {
	env := freezeRoot(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{
		"/sys/class/dmi/id/sys_vendor": "", "/sys/class/virtio-ports/vport2p1/name": "", "/sys/class/virtio-ports/vport1p1/name": "",
		"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu hypervisor\n"})
	r := runner.Run(context.Background(), []runner.Check{fsFreezeCheck}, env, runner.RunOptions{})[0]
	if r.Status != runner.Skip || len(r.Findings) != 1 || r.Findings[0].Code != codeFreezeNotQEMU || !strings.Contains(r.Summary, "hypervisor flag") {
		t.Errorf("%s %q %+v", r.Status, r.Summary, r.Findings)
	}
}

// TestAgentChecksAgree runs the qemu-guest-agent and fs-freeze checks
// together on the VM of the issue (agent installed, no channel):
// both fail on the channel, from the one shared probe.
func TestAgentChecksAgree(t *testing.T) {
	env := freezeRoot(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{
		"/sys/class/virtio-ports/vport2p1/name": ""})
	rs := runner.Run(context.Background(), []runner.Check{agentCheck, fsFreezeCheck}, env, runner.RunOptions{})
	if rs[0].Status != runner.Fail || index(rs[0].Findings)["qga-channel-missing"].Status != runner.Fail {
		t.Errorf("qemu-guest-agent: %s %+v", rs[0].Status, rs[0].Findings)
	}
	if rs[1].Status != runner.Fail || index(rs[1].Findings)[codeFreezeNoChannel].Status != runner.Fail {
		t.Errorf("fs-freeze: %s %+v", rs[1].Status, rs[1].Findings)
	}
}
