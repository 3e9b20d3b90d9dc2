package fsfreeze

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/fact/freeze"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/agenttest"
)

func TestFSFreezeList(t *testing.T) {
	env := agenttest.Env(t, `20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw
21 20 254:2 / /boot/efi rw shared:3 - vfat /dev/vda2 rw
23 20 254:16 / /data rw shared:4 - xfs /dev/vdb rw
27 23 7:0 / /data/img rw shared:7 - ext4 /dev/loop0 rw
`, map[string]string{"/sys/block/loop0/loop/backing_file": "/data/images/disk.img\n"})
	got := agenttest.Index(Run(context.Background(), env))
	if f := got[codeFreezeListOK.ID]; f.Status != runner.Pass || f.Detail["freeze_order"] != "/data/img,/data,/" {
		t.Errorf("list = %+v", f)
	}
	if f := got[codeFreezeMountSkipped.ID]; f.Status != runner.Pass || f.Detail["mountpoint"] != "/boot/efi" {
		t.Errorf("skipped = %+v", f)
	}
	if f := got[codeFreezeLoopBacked.ID]; f.Status != runner.Warn || f.Detail["backing_mount"] != "/data" || f.Remediation == "" {
		t.Errorf("loop = %+v", f)
	}
	if _, ok := got[codeFreezeRootUnfreez.ID]; ok {
		t.Error("ext4 root reported unfreezable")
	}
}

func TestFSFreezeRootUnfreezable(t *testing.T) {
	for _, mi := range []string{
		"20 1 0:30 / / rw shared:1 - overlay overlay rw\n",
		"20 1 254:1 / / ro shared:1 - squashfs /dev/vda1 ro\n",
	} {
		got := agenttest.Index(Run(context.Background(), agenttest.Env(t, mi, map[string]string{})))
		if f := got[codeFreezeRootUnfreez.ID]; f.Status != runner.Fail || f.Remediation == "" {
			t.Errorf("%q: %+v", mi, got)
		}
	}
}

func TestFSFreezeNotLiveAndRefused(t *testing.T) {
	env := agenttest.Env(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{})
	env.Live = false
	if got := agenttest.Index(Run(context.Background(), env)); got[codeFreezeNotLive.ID].Status != runner.Skip {
		t.Errorf("not live: %v", got)
	}
	env.Live = true
	// Under an image root the active test is refused, never attempted.
	env.FreezeTest = &runner.FreezeTest{Mountpoint: "/data"}
	if got := agenttest.Index(Run(context.Background(), env)); got[codeFreezeTestRefused.ID].Status != runner.Error {
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
		{"no-agent", map[string]string{"/usr/sbin/qemu-ga": ""}, []string{codeFreezeNoAgent.ID}, "Install the qemu-guest-agent package"},
		{"no-channel", map[string]string{"/sys/class/virtio-ports/vport2p1/name": ""}, []string{codeFreezeNoChannel.ID}, "name='org.qemu.guest_agent.0'"},
		{"neither", map[string]string{"/usr/sbin/qemu-ga": "", "/sys/class/virtio-ports/vport2p1/name": "", "/sys/class/virtio-ports/vport1p1/name": ""},
			[]string{codeFreezeNoAgent.ID, codeFreezeNoChannel.ID}, "virtserialport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := agenttest.Env(t, mi, tc.files)
			r := runner.Run(context.Background(), []runner.Check{Check}, env, runner.RunOptions{})[0]
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
			if last := agenttest.Index(r.Findings)[tc.fails[len(tc.fails)-1]]; !strings.Contains(last.Remediation, tc.fix) {
				t.Errorf("%s's fix %q lacks %q", last.Code, last.Remediation, tc.fix)
			}
			if f := agenttest.Index(r.Findings)[codeFreezeListOK.ID]; !strings.Contains(f.Message, "would freeze 1 filesystem(s) once it can run") {
				t.Errorf("list = %+v", f)
			}
		})
	}
	// With agent and channel the same root passes.
	r := runner.Run(context.Background(), []runner.Check{Check}, agenttest.Env(t, mi, map[string]string{}), runner.RunOptions{})[0]
	if r.Status != runner.Pass || r.Summary != "qemu-ga will freeze 1 filesystem(s): /" {
		t.Errorf("ready guest: %s %q", r.Status, r.Summary)
	}
}

// TestFSFreezeNotQEMU: where no guest-agent channel can exist (another
// hypervisor, bare metal) qemu-ga never freezes: a skip saying so.
func TestFSFreezeNotQEMU(t *testing.T) {
	env := agenttest.Env(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{
		"/sys/class/dmi/id/sys_vendor": "", "/sys/class/virtio-ports/vport2p1/name": "", "/sys/class/virtio-ports/vport1p1/name": "",
		"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu hypervisor\n"})
	r := runner.Run(context.Background(), []runner.Check{Check}, env, runner.RunOptions{})[0]
	if r.Status != runner.Skip || len(r.Findings) != 1 || r.Findings[0].Code != codeFreezeNotQEMU.ID || !strings.Contains(r.Summary, "hypervisor flag") {
		t.Errorf("%s %q %+v", r.Status, r.Summary, r.Findings)
	}
}

func TestJudgeFreeze(t *testing.T) {
	ms, errs := mountinfo.Parse([]byte(`20 1 0:20 / / rw - overlay overlay rw
23 20 254:16 / /data rw shared:4 - xfs /dev/vdb rw
27 23 7:0 / /data/img rw shared:7 - ext4 /dev/loop0 rw
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f := FreezeFacts{Live: true, Pres: agenttest.Healthy(), Mounts: ms, Backing: map[string]string{"loop0": "/data/disk.img"},
		Test: &freezeTestFacts{Req: freeze.Request{Mountpoint: "/data"}, IsHost: true}}
	got := statuses(JudgeFreeze(f))
	if got[codeFreezeRootUnfreez.ID].Status != runner.Fail || got[codeFreezeLoopBacked.ID].Detail["backing_mount"] != "/data" {
		t.Errorf("list %+v", got)
	}
	if l := got[codeFreezeListOK.ID]; l.Message != "qemu-ga will freeze 2 filesystem(s): /data/img, /data" {
		t.Errorf("list ok %+v", l)
	}
	if r := got[codeFreezeTestRefused.ID]; r.Message != "--freeze-test needs root" {
		t.Errorf("test %+v", r)
	}
	f.Pres = &agent.Presence{Live: true, QEMU: true, Platform: "QEMU"}
	if b := statuses(JudgeFreeze(f)); b[codeFreezeNoAgent.ID].Detail["freeze_order"] == "" || b[codeFreezeNoChannel.ID].Status != runner.Fail {
		t.Errorf("blockers %+v", b)
	}
}

func statuses(fs []runner.Finding) map[string]runner.Finding {
	m := map[string]runner.Finding{}
	for _, f := range fs {
		m[f.Code] = f
	}
	return m
}

// TestFreezeFixes: every finding the judge can give, on every path,
// follows the conventions, and its fix is its code's, filled in.
func TestFreezeFixes(t *testing.T) {
	ms, errs := mountinfo.Parse([]byte(`20 1 0:20 / / rw - overlay overlay rw
21 20 254:2 / /boot/efi rw shared:3 - vfat /dev/vda2 rw
22 20 0:40 / /srv rw shared:5 shared:6 - btrfs /dev/vdc rw
23 20 254:16 / /data rw shared:4 - xfs /dev/vdb rw
27 23 7:0 / /data/img rw shared:7 - ext4 /dev/loop0 rw
`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	base := FreezeFacts{Live: true, Pres: agenttest.Healthy(), Mounts: ms, Backing: map[string]string{"loop0": "/data/disk.img"}}
	test := func(isHost, isRoot bool, res freeze.Result, err error) FreezeFacts {
		f := base
		f.Test = &freezeTestFacts{Req: freeze.Request{Mountpoint: "/data"}, IsHost: isHost, IsRoot: isRoot, Result: res, Err: err}
		return f
	}
	slow := freeze.Result{ThawedBy: "watchdog"}
	var all []runner.Finding
	for name, f := range map[string]FreezeFacts{
		"not live":    {NotLiveReason: "under --root"},
		"not qemu":    {Live: true, Pres: &agent.Presence{Live: true, Platform: "bare metal"}},
		"no mounts":   {Live: true, Pres: agenttest.Healthy(), MountsErr: errors.New("no such file")},
		"no agent":    {Live: true, Pres: &agent.Presence{Live: true, QEMU: true, Platform: "QEMU"}, Mounts: ms},
		"list":        base,
		"under root":  test(false, true, freeze.Result{}, nil),
		"not root":    test(true, false, freeze.Result{}, nil),
		"refused":     test(true, true, freeze.Result{}, freeze.ErrRefused),
		"unsupported": test(true, true, freeze.Result{}, freeze.ErrCannotFreeze),
		"busy":        test(true, true, freeze.Result{}, freeze.ErrAlreadyFrozen),
		"failed":      test(true, true, freeze.Result{}, errors.New("permission denied")),
		"slow":        test(true, true, slow, nil),
		"ok":          test(true, true, freeze.Result{ThawedBy: "guestcheck"}, nil),
	} {
		fs := JudgeFreeze(f)
		all = append(all, fs...)
		t.Run(name, func(t *testing.T) { checktest.Conventions(t, fs, Codes) })
		for _, x := range fs {
			if strings.Contains(x.Remediation, "{") || strings.Contains(x.Remediation, "MOUNTPOINT") {
				t.Errorf("%s: %s: fix not filled in: %q", name, x.Code, x.Remediation)
			}
		}
	}
	// Every wording a code declares is one some path gives.
	for _, c := range Codes {
		for _, tmpl := range c.Fixes() {
			one := runner.Code{ID: c.ID, Fix: tmpl}
			if !slices.ContainsFunc(all, func(f runner.Finding) bool { return f.Code == c.ID && one.Matches(f.Remediation) }) {
				t.Errorf("%s: no finding gives the fix %q", c.ID, tmpl)
			}
		}
	}
}
