package fleet

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// guestReport is a guestcheck JSON report with one check of status st
// and the identity id (nil: none, as an older guestcheck writes).
func guestReport(t testing.TB, st runner.Status, id *guestid.Identity) []byte {
	t.Helper()
	f := runner.New(st, "hostname-odd", "hostname is "+string(st), nil, "fix it")
	rep := report.New([]runner.Result{
		{ID: "hostname", Title: "Hostname", Status: st, Summary: "hostname is " + string(st), Findings: []runner.Finding{f}},
		{ID: "fstab", Title: "fstab", Status: runner.Pass, Summary: "ok", Findings: []runner.Finding{runner.Passf("fstab-ok", "ok", nil)}},
	}, report.Meta{Tool: "guestcheck", Version: "1.0.0", StartedAt: time.Unix(1764417600, 0), Identity: id})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runs makes a fake agent's guest-exec print out.
func runs(out []byte, d time.Duration) func(string, []string) qgafake.Program {
	return func(string, []string) qgafake.Program { return qgafake.Program{Stdout: out, Runs: d} }
}

// pipeTarget is a target whose agent is a over net.Pipe.
func pipeTarget(name string, a *qgafake.Agent) Target {
	return Target{Name: name, Source: "test", Dial: func(ctx context.Context) (Agent, error) {
		c, s := net.Pipe()
		go a.Serve(s)
		cl := qga.New(c)
		if err := cl.Sync(ctx); err != nil {
			cl.Close()
			return nil, err
		}
		return cl, nil
	}}
}

func vmByName(t *testing.T, r Result, name string) VM {
	t.Helper()
	for _, vm := range r.VMs {
		if vm.Name == name {
			return vm
		}
	}
	t.Fatalf("no VM %s in %+v", name, r.VMs)
	return VM{}
}

// TestFailureModes: every way a VM cannot be surveyed is an unknown VM
// with its reason, never an error of the survey, within the VM timeout.
func TestFailureModes(t *testing.T) {
	t.Parallel()
	pass := guestReport(t, runner.Pass, nil)
	v2 := []byte(strings.Replace(string(pass), `"schema_version":1`, `"schema_version":2`, 1))
	huge := make([]byte, 256<<10)
	for i := range huge {
		huge[i] = ' '
	}
	cases := []struct {
		name  string
		agent *qgafake.Agent
		tgt   *Target
		want  string // in the reason
	}{
		{"no channel", nil, &Target{Name: "no channel", Source: "libvirt", Unreachable: "no guest agent channel"}, "no guest agent channel"},
		{"socket missing", nil, &Target{}, "no such socket"},
		{"agent mute", &qgafake.Agent{Mute: true}, nil, "guest agent not responding"},
		{"ping hangs", &qgafake.Agent{HangOn: "guest-ping"}, nil, "guest agent not responding"},
		{"exec disabled in guest-info", &qgafake.Agent{Disabled: []string{"guest-exec"}, Run: runs(pass, 0)}, nil, "guest-exec is disabled in the guest agent"},
		{"exec-status disabled", &qgafake.Agent{Disabled: []string{"guest-exec-status"}, Run: runs(pass, 0)}, nil, "guest-exec-status is disabled"},
		{"exec error CommandDisabled", &qgafake.Agent{Errors: map[string]*qga.Error{"guest-exec": {Class: "CommandDisabled", Desc: "The command guest-exec has been disabled for this instance"}}}, nil, "guest-exec is disabled"},
		{"not installed", &qgafake.Agent{}, nil, "guestcheck is not installed in the guest (/usr/bin/guestcheck: no such file)"},
		{"exit 127", &qgafake.Agent{Run: func(string, []string) qgafake.Program { return qgafake.Program{Exit: 127} }}, nil, "guestcheck is not installed"},
		{"selinux exec denied", &qgafake.Agent{Run: func(p string, _ []string) qgafake.Program {
			return qgafake.Program{StartError: qgafake.PermissionDenied(p)}
		}}, nil, "SELinux"},
		{"selinux avc on stderr", &qgafake.Agent{Run: func(string, []string) qgafake.Program {
			return qgafake.Program{Exit: 1, Stderr: []byte("avc:  denied  { execute } for comm=\"qemu-ga\"")}
		}}, nil, "SELinux"},
		{"exec hangs", &qgafake.Agent{Run: runs(pass, time.Hour)}, nil, "timed out after 1.5s (--vm-timeout) waiting for guestcheck"},
		{"agent hangs mid-exec", &qgafake.Agent{HangOn: "guest-exec-status", Run: runs(pass, 0)}, nil, "timed out after 1.5s"},
		{"disconnect mid-exec", &qgafake.Agent{CloseOn: "guest-exec-status", Run: runs(pass, 0)}, nil, "connection dropped during guest-exec"},
		{"unknown schema version", &qgafake.Agent{Run: runs(v2, 0)}, nil, "schema_version 2 and this one reads 1"},
		{"malformed json", &qgafake.Agent{Run: runs([]byte(`{"schema_version": 1, "tool": "guestcheck", "checks": [`), 0)}, nil, "not a JSON report"},
		{"truncated by the agent", &qgafake.Agent{Run: func(string, []string) qgafake.Program {
			return qgafake.Program{Stdout: pass[:100], Truncated: true}
		}}, nil, "cut guestcheck's output"},
		{"truncated output", &qgafake.Agent{Run: runs(pass[:len(pass)/2], 0)}, nil, "not a JSON report"},
		{"huge output", &qgafake.Agent{Run: runs(huge, 0)}, nil, "larger than the bound"},
		{"not base64", &qgafake.Agent{Run: func(string, []string) qgafake.Program { return qgafake.Program{RawStdout: "!!!"} }}, nil, "not base64"},
		{"killed", &qgafake.Agent{Run: func(string, []string) qgafake.Program { return qgafake.Program{Signal: 9} }}, nil, "killed by signal 9"},
		{"usage error", &qgafake.Agent{Run: func(string, []string) qgafake.Program {
			return qgafake.Program{Exit: 3, Stderr: []byte("guestcheck: unknown option --only\nmore\n")}
		}}, nil, "guestcheck exited 3 in the guest: guestcheck: unknown option --only"},
		{"not a guestcheck report", &qgafake.Agent{Run: runs([]byte(`{"schema_version":1,"tool":"other"}`), 0)}, nil, `not a guestcheck report (tool "other")`},
		{"bad status", &qgafake.Agent{Run: runs([]byte(strings.Replace(string(pass), `"status":"pass"`, `"status":"great"`, 1)), 0)}, nil, `status "great"`},
		{"agent error", &qgafake.Agent{Errors: map[string]*qga.Error{"guest-info": {Class: "GenericError", Desc: "boom\nline"}}}, nil, "guest-info: the guest agent says: boom line"},
	}
	slow := &qgafake.Agent{Delay: 100 * time.Millisecond, Run: runs(pass, 300*time.Millisecond)}
	var targets []Target
	targets = append(targets, pipeTarget("slow but in time", slow))
	for _, tc := range cases {
		switch {
		case tc.tgt != nil && tc.tgt.Name == "":
			targets = append(targets, SocketSource{{Name: tc.name, Path: filepath.Join(t.TempDir(), "absent.qga")}}.targets()...)
		case tc.tgt != nil:
			targets = append(targets, *tc.tgt)
		default:
			targets = append(targets, pipeTarget(tc.name, tc.agent))
		}
	}
	start := time.Now()
	r := Survey(context.Background(), targets, nil, Options{VMTimeout: 1500 * time.Millisecond, MaxOutput: 64 << 10, Concurrency: len(targets)})
	if el := time.Since(start); el > 1500*time.Millisecond+grace {
		t.Errorf("survey took %s, past the VM timeout", el)
	}
	for _, tc := range cases {
		vm := vmByName(t, r, tc.name)
		if vm.Status != Unknown || !strings.Contains(vm.Reason, tc.want) || strings.ContainsAny(vm.Reason, "\n\r") {
			t.Errorf("%s: %s %q, want unknown with %q", tc.name, vm.Status, vm.Reason, tc.want)
		}
		if tc.agent != nil {
			for _, c := range tc.agent.Calls() {
				if !slices.Contains([]string{"guest-sync-delimited", "guest-ping", "guest-info", "guest-exec", "guest-exec-status"}, c) {
					t.Errorf("%s: the survey sent %s: only read-only commands and guest-exec of guestcheck are allowed", tc.name, c)
				}
			}
		}
	}
	if vm := vmByName(t, r, "slow but in time"); vm.Status != Pass || vm.Reason != "" {
		t.Errorf("an agent answering each call in 100 ms: %s %q", vm.Status, vm.Reason)
	}
	if r.Status != Unknown || ExitCode(r) != report.ExitProblem || r.Summary.Unknown != len(cases) || r.Summary.Pass != 1 {
		t.Errorf("overall %s exit %d summary %+v", r.Status, ExitCode(r), r.Summary)
	}
}
