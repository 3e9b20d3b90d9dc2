package qemuguestagent

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/auditlog"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
	"github.com/guestcheck/guestcheck/internal/testenv/agenttest"
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
	for _, code := range []string{CodeChannelOK.ID, CodeInstalled.ID, CodeUnitActive.ID, CodeProcessOK.ID, CodeFilterOK.ID, CodeNotFrozen.ID, CodeHookOK.ID, CodeSELinuxOK.ID} {
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
	if len(fs) != 2 || fs[0].Code != CodeNotLive.ID || fs[1].Code != CodeNotInstalled.ID || fs[1].Status != runner.Skip {
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
	if len(fs) != 1 || fs[0].Code != CodeNotVM.ID || fs[0].Status != runner.Skip {
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
	ch := got[CodeChannelMissing.ID]
	if ch.Status != runner.Fail || ch.Detail["unit_state"] != UnitName+" inactive (dead)" || ch.Detail["agent_processes"] != "none" ||
		ch.Detail["unit_waits_for"] == "" {
		t.Errorf("channel finding %+v", ch)
	}
	if w := got[CodeUnitWaits.ID]; w.Status != runner.Skip || !strings.Contains(w.Detail["started_by"], "udev rule") {
		t.Errorf("waits finding %+v", w)
	}
	if _, ok := got[CodeProcessMissing.ID]; ok {
		t.Error("a waiting unit also reported the missing process")
	}
	f.UdevRule = ""
	if w := statuses(Judge(f))[CodeUnitWaits.ID]; w.Status != runner.Warn {
		t.Errorf("nothing starts it: %+v", w)
	}
}

func TestJudgeFilter(t *testing.T) {
	f := healthyFacts()
	f.Settings.Block = []string{"guest-fsfreeze-freeze", "guest-exec", "guest-file-*"}
	f.Settings.Origin["block-rpcs"] = "command line"
	f.ProbeDeclared, f.ProbeWhere = true, "guestcheck.yaml:3"
	got := statuses(Judge(f))
	if got[CodeFreezeBlocked.ID].Status != runner.Fail || got[CodeFilterUnknown.ID].Detail["unknown_names"] != "guest-file-*" {
		t.Errorf("filter findings %+v", got)
	}
	if e := got[CodeExecBlocked.ID]; e.Status != runner.Fail || e.Detail["probe_declared_in"] != "guestcheck.yaml:3" {
		t.Errorf("exec %+v", e)
	}
	if _, ok := got[CodeFreezeBlocked.ID].Detail["probe_declared_in"]; ok {
		t.Error("a finding's own detail leaked into the shared one")
	}
	if _, ok := got[CodeFilterOK.ID]; ok {
		t.Error("filter ok despite a blocked freeze RPC")
	}
}

func TestJudgeMarker(t *testing.T) {
	f := healthyFacts()
	f.Marker.Err, f.Marker.Mtime = nil, factsNow.Add(-time.Minute)
	if m := statuses(Judge(f))[CodeFrozenRecent.ID]; m.Status != runner.Warn || m.Detail["marker_age"] != "1m0s" {
		t.Errorf("recent %+v", m)
	}
	f.Marker.Mtime = factsNow.Add(-time.Hour)
	if m := statuses(Judge(f))[CodeFrozenMarker.ID]; m.Status != runner.Fail {
		t.Errorf("old %+v", m)
	}
	f.Marker.Err = errors.New("permission denied")
	if m := statuses(Judge(f))[CodeUnreadable.ID]; m.Status != runner.Error || m.Detail["error"] != "permission denied" {
		t.Errorf("unreadable %+v", m)
	}
}

func TestJudgeHooksAndSELinux(t *testing.T) {
	f := healthyFacts()
	f.Settings.HookEnabled, f.Settings.Hook = true, "/etc/qemu/fsfreeze-hook"
	f.Hook = fs.Entry{Name: "fsfreeze-hook", Kind: fs.KindRegular, Perm: 0o755}
	f.HookScripts = []script{{name: "db.sh", runnable: true}, {name: "old.sh.bak", why: "ignored suffix"}}
	f.SELinux = selinux{Enforcing: true, From: "/sys/fs/selinux/enforce", UnconfinedOff: true, AVCs: []auditlog.AVC{
		{Comm: "qemu-ga", Path: "/data", Perms: []string{"read"}, TContext: "default_t", Time: factsNow.Add(-30 * 24 * time.Hour)},
	}}
	got := statuses(Judge(f))
	if h := got[CodeHookOK.ID]; !strings.Contains(h.Message, "runs 1 script(s)") || h.Detail["hook_dir"] != "/etc/qemu/fsfreeze-hook.d" {
		t.Errorf("hook %+v", h)
	}
	if got[CodeHookScriptIgnored.ID].Detail["skipped"] != "old.sh.bak (ignored suffix)" {
		t.Errorf("ignored %+v", got[CodeHookScriptIgnored.ID])
	}
	if got[CodeSELinuxConfined.ID].Status != runner.Warn {
		t.Errorf("confined %+v", got[CodeSELinuxConfined.ID])
	}
	if _, ok := got[CodeSELinuxDenied.ID]; ok {
		t.Error("a denial older than the audit window counted")
	}
	f.Hook.Perm = 0o644
	if h := statuses(Judge(f))[CodeHookMissing.ID]; h.Detail["problem"] != "not executable" {
		t.Errorf("hook not executable: %+v", h)
	}
}

func TestJudgeInterrupted(t *testing.T) {
	f := healthyFacts()
	f.Interrupted = true
	fs := Judge(f)
	if last := fs[len(fs)-1]; last.Code != CodeUnreadable.ID || last.Status != runner.Error {
		t.Errorf("got %+v", fs)
	}
	if _, ok := statuses(fs)[CodeFilterOK.ID]; ok {
		t.Error("judged the filter after the deadline")
	}
}

// TestFixesOnEveryPath: on the running system and under an image root,
// every finding's fix is one of its code's, with every placeholder
// filled in.
func TestFixesOnEveryPath(t *testing.T) {
	v82, _ := ParseVersion("8.2.0")
	kf, _ := LoadKeyFile("/etc/qemu/qemu-ga.conf", []byte("[general]\nblock-rpcs=guest-ping\nallow-rpcs=guest-info\n"))
	variants := map[string]func(*Facts){
		"healthy": func(*Facts) {},
		"filter": func(f *Facts) {
			f.Settings.Block = []string{"guest-fsfreeze-freeze", "guest-exec", "guest-get-users", "guest-file-*"}
			f.ProbeDeclared, f.ProbeWhere = true, "guestcheck.yaml:3"
		},
		"allow-list": func(f *Facts) { f.Settings.Allow, f.Settings.AllowSet = []string{"guest-ping", "guest-*"}, true },
		"invalid":    func(f *Facts) { f.Settings = Merge(v82, "/etc/qemu", kf, "/etc/qemu/qemu-ga.conf", Args{}) },
		"ignored": func(f *Facts) {
			f.Unit = &unitInfo{env: map[string]string{"BLOCK_RPCS": "guest-exec"}, envFrom: map[string]string{"BLOCK_RPCS": "/etc/sysconfig/qemu-ga"}}
			f.OtherConfs = []string{"/etc/qemu-kvm/qemu-ga.conf"}
		},
		"frozen":        func(f *Facts) { f.Marker.Err, f.Marker.Mtime = nil, factsNow.Add(-time.Hour) },
		"frozen-recent": func(f *Facts) { f.Marker.Err, f.Marker.Mtime = nil, factsNow.Add(-time.Minute) },
		"marker-denied": func(f *Facts) { f.Marker.Err = iofs.ErrPermission },
		"marker-root-denied": func(f *Facts) {
			f.Marker.Err, f.IsRoot = iofs.ErrPermission, true
		},
		"marker-broken": func(f *Facts) { f.Marker.Err = errors.New("input/output error") },
		"hook-missing": func(f *Facts) {
			f.Settings.HookEnabled, f.Settings.Hook, f.HookErr = true, "/etc/qemu/fsfreeze-hook", iofs.ErrNotExist
		},
		"hook-disabled": func(f *Facts) { f.Stranded = []string{"/etc/qemu/fsfreeze-hook.d/db.sh"} },
		"hook-scripts": func(f *Facts) {
			f.Settings.HookEnabled, f.Settings.Hook = true, "/etc/qemu/fsfreeze-hook"
			f.Hook = fs.Entry{Name: "fsfreeze-hook", Kind: fs.KindRegular, Perm: 0o755}
			f.HookScripts = []script{{name: "db.sh", runnable: true}, {name: "old.sh", why: "not executable"}}
			f.SELinux = selinux{Enforcing: true, UnconfinedOff: true, AVCs: []auditlog.AVC{
				{Comm: "qemu-ga", Path: "/data", Perms: []string{"read"}, TContext: "default_t", Time: factsNow.Add(-time.Hour)}}}
		},
		"units-unreadable":      func(f *Facts) { f.UnitsErr = errors.New("connection refused") },
		"units-unreadable-root": func(f *Facts) { f.UnitsErr, f.IsRoot = errors.New("connection refused"), true },
		"interrupted":           func(f *Facts) { f.Interrupted = true },
		"unit-down": func(f *Facts) {
			f.Units[0].ActiveState, f.Units[0].UnitFileState, f.Units[0].NRestarts = "failed", "disabled", 5
			f.Pres = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Port: "vport2p1", Link: "../vport2p1", Platform: "QEMU"}
		},
		"unit-masked": func(f *Facts) { f.Units[0].LoadState = "masked" },
		"unit-absent": func(f *Facts) { f.Units[0] = systemd.UnitState{Name: UnitName, LoadState: "not-found"} },
		"no-channel": func(f *Facts) {
			f.Pres = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Platform: "QEMU"}
		},
		"no-link": func(f *Facts) {
			f.Pres = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Port: "vport2p1", Platform: "QEMU"}
		},
		"masked-no-link": func(f *Facts) {
			f.Pres, f.Units[0].LoadState = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Port: "vport2p1", Platform: "QEMU"}, "masked"
		},
		"down-no-channel": func(f *Facts) {
			f.Pres, f.Units[0].ActiveState = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Platform: "QEMU"}, "failed"
		},
		"waits": func(f *Facts) {
			f.Pres, f.Units[0].ActiveState = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Platform: "QEMU"}, "inactive"
			f.Missing = []string{`dev-virtio\x2dports-org.qemu.guest_agent.0.device (/dev/virtio-ports/org.qemu.guest_agent.0)`}
		},
		"masked-no-channel": func(f *Facts) {
			f.Pres, f.Units[0].LoadState = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Platform: "QEMU"}, "masked"
		},
		"down-no-link": func(f *Facts) {
			f.Pres, f.Units[0].ActiveState = &agent.Presence{Live: true, QEMU: true, Binary: "/usr/sbin/qemu-ga", Port: "vport2p1", Platform: "QEMU"}, "failed"
		},
		"not-on-port": func(f *Facts) {
			f.Pres = agenttest.Healthy()
			f.Pres.Procs[0].FDs = []string{"/dev/ttyS0"}
		},
		"not-installed": func(f *Facts) { f.Pres = &agent.Presence{Live: true, QEMU: true, Port: "vport2p1", Platform: "QEMU"} },
	}
	var all []runner.Finding
	for name, edit := range variants {
		for _, live := range []bool{true, false} {
			f := healthyFacts()
			f.Units = append([]systemd.UnitState(nil), f.Units...)
			f.Settings.Origin = map[string]string{}
			edit(&f)
			f.Live = live
			if !live {
				f.NotLiveReason = "under --root"
			}
			out := Judge(f)
			all = append(all, out...)
			t.Run(fmt.Sprintf("%s/live=%v", name, live), func(t *testing.T) {
				checktest.Conventions(t, out, Codes)
				for _, x := range out {
					c, _ := runner.Check{Codes: Codes}.CodeByID(x.Code)
					for _, tmpl := range c.Fixes() {
						for _, p := range runner.Placeholders(tmpl) {
							if x.Remediation != "" && strings.Contains(x.Remediation, strings.ToUpper(p)) {
								t.Errorf("%s: placeholder %s not filled in: %q", x.Code, p, x.Remediation)
							}
						}
					}
				}
			})
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
