package guestagent

import (
	"errors"
	iofs "io/fs"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/testenv/agenttest"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// These tests judge Facts values built in memory: no root, no /proc, no
// systemd. The fixture roots (check_test.go, waits_test.go) cover Gather.

var factsNow = time.Unix(1767225600, 0)

// healthyFacts is a KubeVirt guest whose agent runs on its channel with
// the compiled-in defaults.
func healthyFacts() Facts {
	v, _ := ParseVersion("7.2.22")
	return Facts{
		Live:    true,
		Now:     factsNow,
		Pres:    agenttest.Healthy(),
		Version: v, VersionFrom: "/usr/sbin/qemu-ga", Confdir: "/etc/qemu",
		HasSystemd: true,
		Units: []systemd.UnitState{{Name: UnitName, LoadState: "loaded", ActiveState: "active", SubState: "running",
			UnitFileState: "static", MainPID: 55}},
		Settings:     Merge(v, "/etc/qemu", nil, "", Args{}),
		SettingsFrom: "process 55 (/proc/55/cmdline)",
		Marker:       marker{Path: "/var/run/" + FrozenMarker, Err: iofs.ErrNotExist},
	}
}

func statuses(fs []runner.Finding) map[string]runner.Finding {
	m := map[string]runner.Finding{}
	for _, f := range fs {
		m[f.Code] = f
	}
	return m
}

func TestJudgeHealthy(t *testing.T) {
	got := statuses(Judge(healthyFacts()))
	for _, code := range []string{CodeChannelOK, CodeInstalled, CodeUnitActive, CodeProcessOK, CodeFilterOK, CodeNotFrozen, CodeHookOK, CodeSELinuxOK} {
		if f, ok := got[code]; !ok || f.Status != runner.Pass {
			t.Errorf("%s: %+v", code, f)
		}
	}
	if len(got) != 8 {
		t.Errorf("got %d findings: %v", len(got), got)
	}
}

func TestJudgeNotLiveNotInstalled(t *testing.T) {
	f := Facts{NotLiveReason: "needs the running system, but --root is /mnt", Pres: &agent.Presence{}}
	fs := Judge(f)
	if len(fs) != 2 || fs[0].Code != CodeNotLive || fs[1].Code != CodeNotInstalled || fs[1].Status != runner.Skip {
		t.Errorf("got %+v", fs)
	}
	if !strings.HasSuffix(fs[0].Message, f.NotLiveReason) {
		t.Errorf("message %q", fs[0].Message)
	}
}

func TestJudgeNotAVM(t *testing.T) {
	f := healthyFacts()
	f.Pres = &agent.Presence{Live: true, Binary: "/usr/sbin/qemu-ga", Platform: "no hypervisor flag and no QEMU/KVM DMI vendor"}
	fs := Judge(f)
	if len(fs) != 1 || fs[0].Code != CodeNotVM || fs[0].Status != runner.Skip {
		t.Errorf("got %+v", fs)
	}
}

// TestJudgeWaitingUnitAddsEvidence: with no channel, the unit that waits
// for it and the missing process are evidence on the channel failure,
// not failures of their own.
func TestJudgeWaitingUnitAddsEvidence(t *testing.T) {
	f := healthyFacts()
	f.Pres.Port, f.Pres.Link, f.Pres.Procs = "", "", nil
	f.Pres.Platform = "/sys/class/dmi/id/sys_vendor is QEMU"
	f.Units[0].ActiveState, f.Units[0].SubState = "inactive", "dead"
	f.Missing = []string{debianDevice + " (" + DefaultVirtioPath + ")"}
	f.UdevRule = "/lib/udev/rules.d/60-qemu-guest-agent.rules"
	got := statuses(Judge(f))
	ch := got[CodeChannelMissing]
	if ch.Status != runner.Fail || ch.Detail["unit_state"] != UnitName+" inactive (dead)" || ch.Detail["agent_processes"] != "none" ||
		ch.Detail["unit_waits_for"] == "" {
		t.Errorf("channel finding %+v", ch)
	}
	if w := got[CodeUnitWaits]; w.Status != runner.Skip || !strings.Contains(w.Detail["started_by"], "udev rule") {
		t.Errorf("waits finding %+v", w)
	}
	if _, ok := got[CodeProcessMissing]; ok {
		t.Error("a waiting unit also reported the missing process")
	}
	f.UdevRule = ""
	if w := statuses(Judge(f))[CodeUnitWaits]; w.Status != runner.Warn {
		t.Errorf("nothing starts it: %+v", w)
	}
}

func TestJudgeFilter(t *testing.T) {
	f := healthyFacts()
	f.Settings.Block = []string{"guest-fsfreeze-freeze", "guest-exec", "guest-file-*"}
	f.Settings.Origin["block-rpcs"] = "command line"
	f.ProbeDeclared, f.ProbeWhere = true, "guestcheck.yaml:3"
	got := statuses(Judge(f))
	if got[CodeFreezeBlocked].Status != runner.Fail || got[CodeFilterUnknown].Detail["unknown_names"] != "guest-file-*" {
		t.Errorf("filter findings %+v", got)
	}
	if e := got[CodeExecBlocked]; e.Status != runner.Fail || e.Detail["probe_declared_in"] != "guestcheck.yaml:3" {
		t.Errorf("exec %+v", e)
	}
	if _, ok := got[CodeFreezeBlocked].Detail["probe_declared_in"]; ok {
		t.Error("a finding's own detail leaked into the shared one")
	}
	if _, ok := got[CodeFilterOK]; ok {
		t.Error("filter ok despite a blocked freeze RPC")
	}
}

func TestJudgeMarker(t *testing.T) {
	f := healthyFacts()
	f.Marker.Err, f.Marker.Mtime = nil, factsNow.Add(-time.Minute)
	if m := statuses(Judge(f))[CodeFrozenRecent]; m.Status != runner.Warn || m.Detail["marker_age"] != "1m0s" {
		t.Errorf("recent %+v", m)
	}
	f.Marker.Mtime = factsNow.Add(-time.Hour)
	if m := statuses(Judge(f))[CodeFrozenMarker]; m.Status != runner.Fail {
		t.Errorf("old %+v", m)
	}
	f.Marker.Err = errors.New("permission denied")
	if m := statuses(Judge(f))[CodeUnreadable]; m.Status != runner.Error || m.Detail["error"] != "permission denied" {
		t.Errorf("unreadable %+v", m)
	}
}

func TestJudgeHooksAndSELinux(t *testing.T) {
	f := healthyFacts()
	f.Settings.HookEnabled, f.Settings.Hook = true, "/etc/qemu/fsfreeze-hook"
	f.Hook = fs.Entry{Name: "fsfreeze-hook", Kind: fs.KindRegular, Perm: 0o755}
	f.HookScripts = []script{{name: "db.sh", runnable: true}, {name: "old.sh.bak", why: "ignored suffix"}}
	f.SELinux = selinux{Enforcing: true, From: "/sys/fs/selinux/enforce", UnconfinedOff: true, AVCs: []AVC{
		{Comm: "qemu-ga", Path: "/data", Perms: []string{"read"}, TContext: "default_t", Time: factsNow.Add(-30 * 24 * time.Hour)},
	}}
	got := statuses(Judge(f))
	if h := got[CodeHookOK]; !strings.Contains(h.Message, "runs 1 script(s)") || h.Detail["hook_dir"] != "/etc/qemu/fsfreeze-hook.d" {
		t.Errorf("hook %+v", h)
	}
	if got[CodeHookScriptIgnored].Detail["skipped"] != "old.sh.bak (ignored suffix)" {
		t.Errorf("ignored %+v", got[CodeHookScriptIgnored])
	}
	if got[CodeSELinuxConfined].Status != runner.Warn {
		t.Errorf("confined %+v", got[CodeSELinuxConfined])
	}
	if _, ok := got[CodeSELinuxDenied]; ok {
		t.Error("a denial older than the audit window counted")
	}
	f.Hook.Perm = 0o644
	if h := statuses(Judge(f))[CodeHookMissing]; h.Detail["problem"] != "not executable" {
		t.Errorf("hook not executable: %+v", h)
	}
}

func TestJudgeInterrupted(t *testing.T) {
	f := healthyFacts()
	f.Interrupted = true
	fs := Judge(f)
	if last := fs[len(fs)-1]; last.Code != CodeUnreadable || last.Status != runner.Error {
		t.Errorf("got %+v", fs)
	}
	if _, ok := statuses(fs)[CodeFilterOK]; ok {
		t.Error("judged the filter after the deadline")
	}
}
