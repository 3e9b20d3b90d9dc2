package cloudinit

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks/cloud-init/cloudinittest"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// These tests judge Facts values built in memory: no root, no /proc, no
// systemd. The filesystem-backed tests (check_test.go) cover Gather.

var judgeNow = time.Date(2025, 11, 29, 22, 0, 0, 0, time.UTC)

// liveFacts is an installed, enabled cloud-init up for 5 minutes whose
// status.json holds stages.
func liveFacts(stage string, result bool, stages ...cloudinitstatus.StageStatus) Facts {
	return Facts{
		Live: true,
		Snap: &Snapshot{
			InstalledEvidence: StatusPath,
			Inputs: Inputs{
				Installed:    true,
				Boot:         DetectBootStatus(BootInputs{GeneratorEnabled: true}),
				Status:       &cloudinitstatus.StatusFile{Datasource: "DataSourceNoCloud", Stage: stage, Stages: stages},
				ResultExists: result,
				Clock:        NewBootClock(judgeNow, time.Time{}, 5*time.Minute, true),
			},
		},
	}
}

func stageAt(name string, start, finished float64, errs ...string) cloudinitstatus.StageStatus {
	return cloudinitstatus.StageStatus{Name: name, Errors: errs, Start: cloudinitstatus.Timestamp{Raw: start, Set: true},
		Finished: cloudinitstatus.Timestamp{Raw: finished, Set: finished > 0}}
}

func codes(fs []runner.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f.Status)+" "+f.Code)
	}
	return strings.Join(s, ", ")
}

func TestJudgeNotInstalled(t *testing.T) {
	f := Facts{Snap: &Snapshot{}, Live: true}
	if got := codes(Judge(f)); got != "skip cloud-init-not-installed" {
		t.Errorf("got %s", got)
	}
	f.Required = true
	fs := Judge(f)
	if codes(fs) != "fail cloud-init-not-installed" || !strings.Contains(fs[0].Remediation, "cloud_init.required: false") {
		t.Errorf("got %+v", fs)
	}
}

func TestJudgeDone(t *testing.T) {
	f := liveFacts("", true, stageAt(cloudinitstatus.StageInit, 8, 11.5), stageAt(cloudinitstatus.StageModulesFinal, 20, 25.5))
	fs := Judge(f)
	if codes(fs) != "pass cloud-init-done" {
		t.Fatalf("got %s", codes(fs))
	}
	d := fs[0].Detail
	for k, v := range map[string]string{"extended_status": "done", "datasource": "nocloud", "uptime": "5m0s",
		"last_update": "2025-11-29T21:55:25Z (25.5)", "boot_finished": "absent", "units": ""} {
		if d[k] != v {
			t.Errorf("detail %s = %q, want %q", k, d[k], v)
		}
	}
}

func TestJudgeUnreadableStatusUsesDisplay(t *testing.T) {
	f := liveFacts("", false)
	f.Snap.Inputs.Status = nil
	f.Snap.StatusErr = &FileError{StatusPath, syscall.EACCES}
	f.Display = func(p string) string { return "/mnt" + p }
	fs := Judge(f)
	if codes(fs) != "error cloud-init-status-unreadable" {
		t.Fatalf("got %s", codes(fs))
	}
	if fs[0].Message != "/mnt/run/cloud-init/status.json: permission denied" || !strings.Contains(fs[0].Remediation, "as root") {
		t.Errorf("got %+v", fs[0])
	}
}

func TestJudgeRunningInsideFinal(t *testing.T) {
	f := liveFacts(cloudinitstatus.StageModulesFinal, false, stageAt(cloudinitstatus.StageInit, 8, 11.5, "Consuming user data failed!"), stageAt(cloudinitstatus.StageModulesFinal, 20, 0))
	f.Inside, f.Via = true, "/var/lib/cloud/instance/scripts/runcmd (pid 900)"
	fs := Judge(f)
	if got := codes(fs); got != "pass cloud-init-running-in-final, fail cloud-init-module-error" {
		t.Fatalf("got %s", got)
	}
	if !strings.HasSuffix(fs[0].Message, "earlier stages recorded errors, reported separately") || fs[0].Detail["invoked_from"] != f.Via {
		t.Errorf("got %+v", fs[0])
	}
	f.Inside = false
	if got := codes(Judge(f)); got != "warn cloud-init-running, fail cloud-init-module-error" {
		t.Errorf("from the console: %s", got)
	}
}

func TestJudgeNotStartedOffline(t *testing.T) {
	f := liveFacts("", false)
	f.Snap.Inputs.Status = nil
	f.Live, f.NotLiveReason = false, "needs the running system, but --root is /mnt"
	fs := Judge(f)
	if codes(fs) != "skip cloud-init-not-started" || fs[0].Detail["reason"] != f.NotLiveReason {
		t.Errorf("got %+v", fs)
	}
}

func TestJudgeModuleErrorIsOneLine(t *testing.T) {
	msg := "('scripts_user', RuntimeError('Runparts: 1 failures\n in runcmd'))"
	fs := Judge(liveFacts("", true, stageAt(cloudinitstatus.StageModulesFinal, 20, 25, msg)))
	e := fs[0]
	if e.Code != codeCIModuleError.ID || e.Message != "cloud-init module scripts_user failed in stage modules-final: ('scripts_user', RuntimeError('Runparts: 1 failures in runcmd'))" {
		t.Fatalf("got %+v", e)
	}
	if e.Detail["error"] != msg || e.Detail["module"] != "scripts_user" || !strings.Contains(e.Remediation, "--exit-zero") {
		t.Errorf("detail %v, fix %q", e.Detail, e.Remediation)
	}
}

func TestJudgeRecoverableByLevel(t *testing.T) {
	init := stageAt(cloudinitstatus.StageInit, 8, 11)
	init.RecoverableErrors = map[string][]string{"WARNING": {"a", "b"}, "DEPRECATED": {"old key"}}
	final := stageAt(cloudinitstatus.StageModulesFinal, 20, 25)
	final.RecoverableErrors = map[string][]string{"WARNING": {"c"}}
	fs := Judge(liveFacts("", true, init, final))
	if got := codes(fs); got != "pass cloud-init-done, warn cloud-init-recoverable-error, warn cloud-init-recoverable-error" {
		t.Fatalf("got %s", got)
	}
	if fs[1].Detail["level"] != "DEPRECATED" || fs[2].Message != "cloud-init logged 3 WARNING messages: a (+2 more)" ||
		fs[2].Detail["error_stages"] != "init, modules-final" {
		t.Errorf("got %+v / %+v", fs[1], fs[2])
	}
}

// TestJudgeUnitKeepsEmptyStates: a failed unit whose unit-file state
// systemd left empty still carries the key, as before runner.Detail.
func TestJudgeUnitKeepsEmptyStates(t *testing.T) {
	f := liveFacts("", true, stageAt(cloudinitstatus.StageModulesFinal, 20, 25))
	f.Snap.Inputs.Units = []systemd.UnitState{cloudinittest.Unit("cloud-final.service", "failed", "failed", "")}
	fs := Judge(f)
	if got := codes(fs); got != "pass cloud-init-done, fail cloud-init-unit-failed" {
		t.Fatalf("got %s", got)
	}
	if v, ok := fs[1].Detail["unit_file_state"]; !ok || v != "" {
		t.Errorf("unit_file_state = %q, %v", v, ok)
	}
	if fs[1].Detail["units"] != "cloud-final.service=failed/failed ()" {
		t.Errorf("units = %q", fs[1].Detail["units"])
	}
}

func TestInsideOf(t *testing.T) {
	chain := []ancestor{
		{pid: 900, comm: "sh", args: []string{"/bin/sh", "/var/lib/cloud/instance/scripts/runcmd"}},
		{pid: 640, comm: "cloud-init", args: []string{"/usr/bin/python3", "/usr/bin/cloud-init", "modules", "--mode=final"}},
		{pid: 2, comm: "cloud-init"},
	}
	in, via := insideOf(chain)
	if !in || via != "/var/lib/cloud/instance/scripts/runcmd (pid 900) under cloud-init modules --mode=final (pid 640)" {
		t.Errorf("got %v %q", in, via)
	}
	if in, _ := insideOf(chain[:0]); in {
		t.Error("empty chain is inside")
	}
	if in, via := insideOf([]ancestor{{pid: 5, comm: "cloud-init"}}); !in || via != "cloud-init (pid 5)" {
		t.Errorf("hidden cmdline: %v %q", in, via)
	}
}

func TestWaitOutcomeAndNotice(t *testing.T) {
	done := liveFacts("", true, stageAt(cloudinitstatus.StageModulesFinal, 20, 25)).Snap
	if st, ok, err := waitOutcome(done); !ok || err != nil || st.ExtendedStatus() != "done" {
		t.Errorf("done: %v %v %v", st, ok, err)
	}
	running := liveFacts(cloudinitstatus.StageInit, false, stageAt(cloudinitstatus.StageInit, 8, 0)).Snap
	st, ok, _ := waitOutcome(running)
	if ok {
		t.Error("running ends the wait")
	}
	if n := waitNotice(time.Minute, st, true, nil); n != `cloud-init is still "running" after --wait 1m0s; checking now` {
		t.Errorf("notice %q", n)
	}
	broken := &Snapshot{StatusErr: &FileError{StatusPath, errors.New("bad")}}
	_, ok, err := waitOutcome(broken)
	if ok || err == nil {
		t.Errorf("broken: %v %v", ok, err)
	}
	if n := waitNotice(time.Minute, nil, true, err); n != "cloud-init state unknown after --wait 1m0s (/run/cloud-init/status.json: bad); checking now" {
		t.Errorf("notice %q", n)
	}
	if n := waitNotice(time.Minute, st, false, nil); n != "" {
		t.Errorf("finished wait: %q", n)
	}
}
