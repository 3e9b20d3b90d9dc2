package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// surveyHost runs the real binary's guestcheck fleet --host-name host
// over fake agents, one per VM with identity ids[vm], and writes its
// JSON to dir/host.json.
func surveyHost(t *testing.T, bin, dir, host string, ids map[string]*guestid.Identity) string {
	t.Helper()
	sockets := socketDir(t)
	args := []string{"fleet", "--host-name", host, "--format", "json", "--vm-timeout", "10s"}
	for name, id := range ids {
		p := fakeGuest(t, sockets, name, &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Pass, id))})
		args = append(args, "--agent-socket", name+"="+p)
	}
	cmd := exec.Command(bin, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil || errb.Len() > 0 {
		t.Fatalf("survey of %s: %v, stderr %q", host, err, errb.String())
	}
	p := filepath.Join(dir, host+".json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFleetMergeHosts: two hosts surveyed by the real binary, each on
// its own, then merged: vm-alpha (hv-a) and vm-bravo (hv-b) are clones
// sharing a machine-id, which neither host's survey can see;
// vm-charlie shares nothing.
func TestFleetMergeHosts(t *testing.T) {
	bin := buildGuestcheck(t)
	dir := t.TempDir()
	id := func(mid, key string) *guestid.Identity {
		return &guestid.Identity{MachineIDHash: mid, HostKeys: []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:" + strings.Repeat(key, 43)}}}
	}
	const clone = "0123456789abcdef0123456789abcdef"
	a := surveyHost(t, bin, dir, "hv-a", map[string]*guestid.Identity{"vm-alpha": id(clone, "A"), "vm-charlie": id("cccccccccccccccccccccccccccccccc", "C")})
	b := surveyHost(t, bin, dir, "hv-b", map[string]*guestid.Identity{"vm-bravo": id(clone, "B")})

	cmd := exec.Command(bin, "fleet", "--merge", a, b, "--output", "prometheus:"+filepath.Join(dir, "fleet.prom"))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if code := cmd.ProcessState.ExitCode(); code != 1 || errb.Len() > 0 {
		t.Fatalf("merge: exit %d (%v), stderr %q", code, err, errb.String())
	}
	text := string(out)
	for _, want := range []string{
		"machine-id hash 01234567...: vm-alpha@hv-a, vm-bravo@hv-b",
		"vm-alpha    hv-a  socket  fail    1 pass  shares machine-id with vm-bravo@hv-b",
		"vm-charlie  hv-a  socket  pass    1 pass",
		"guestcheck fleet: FAIL: 3 VMs on 2 hosts (2 fail, 1 pass), 1 shared identity item in ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("merged text lacks %q:\n%s", want, text)
		}
	}
	prom, _ := os.ReadFile(filepath.Join(dir, "fleet.prom"))
	if !strings.Contains(string(prom), `guestcheck_fleet_vm_shared_identity{domain="vm-alpha",host="hv-a",item="machine-id"} 1`) {
		t.Errorf("metrics:\n%s", prom)
	}
}

// TestFleetMergeErrors: a file at fault is one line naming it, exit 1;
// options that survey this host do not go with --merge (exit 3).
func TestFleetMergeErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema_version": 1, "tool": "guestcheck fleet",`), 0o644)
	rep := filepath.Join(dir, "report.json")
	os.WriteFile(rep, reportOf(t, runner.Pass, nil), 0o644)
	for args, want := range map[string]string{
		"--merge " + bad:                 "guestcheck fleet: --merge " + bad + ": line 1, column 49: not JSON: unexpected end of JSON input\n",
		"--merge " + rep:                 "guestcheck fleet: --merge " + rep + `: not a guestcheck fleet survey (tool "guestcheck"): merge what guestcheck fleet --format json wrote on each host` + "\n",
		"--merge " + bad + " " + bad:     "guestcheck fleet: --merge " + bad + " and " + bad + " are the same file: merge each host's survey once\n",
		"--merge " + dir + "/none.json":  "guestcheck fleet: --merge " + dir + "/none.json: no such file or directory\n",
		"--merge " + bad + " --proxmox":  "--proxmox surveys this host, and --merge compares surveys made already",
		"--shared-network default":       "--shared-network needs --merge",
		"--merge " + bad + " --listen :": "--listen surveys this host",
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"fleet"}, strings.Fields(args)...), &out, &errb, checks.All)
		wantCode := report.ExitProblem
		if !strings.HasPrefix(want, "guestcheck fleet: --merge") {
			wantCode = report.ExitUsage
		}
		if code != wantCode || !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 || out.Len() > 0 {
			t.Errorf("%s: exit %d, stderr %q, want %d and %q", args, code, errb.String(), wantCode, want)
		}
	}
}

// TestFleetMergeBound is the merge benchmark on the real
// binary: 100 hosts' surveys of 50 VMs each (5,000 VMs with reports the
// size of a real guest's, about 105 MiB of JSON) merged, with its wall
// and CPU time and peak RSS logged; the figures are in docs/fleet.md.
func TestFleetMergeBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and merges 100 surveys of 50 VMs")
	}
	bin := buildGuestcheck(t)
	files := writeSurveys(t, t.TempDir(), 100, 50)
	out, u, code := runChild(t, bin, append([]string{"fleet", "--merge"}, files...))
	t.Logf("merge of %d surveys of 50 VMs: wall %s, CPU %s, peak RSS %.1f MiB", len(files),
		u.wall.Round(time.Millisecond), u.cpu.Round(time.Millisecond), float64(u.maxRSS)/(1<<20))
	if code != 1 || !bytes.Contains(out, []byte("guestcheck fleet: FAIL: 5000 VMs on 100 hosts (100 fail, 4900 pass), 50 shared identity items")) {
		t.Errorf("exit %d, last line %s", code, out[bytes.LastIndexByte(bytes.TrimSpace(out), '\n')+1:])
	}
	if u.maxRSS > 200<<20 {
		t.Errorf("peak RSS %d MiB: a merge holds only what it compares, not the reports", u.maxRSS>>20)
	}
}

// writeSurveys writes hosts' surveys of perHost VMs each, as guestcheck
// fleet --format json writes them, with realisticReport's reports: the
// first VM of every odd host is a clone of the first of the host before
// (one machine-id).
func writeSurveys(t testing.TB, dir string, hosts, perHost int) []string {
	t.Helper()
	var files []string
	for h := range hosts {
		r := fleet.Result{SchemaVersion: fleet.SchemaVersion, Tool: "guestcheck fleet", Version: "1.0.0", Host: fmt.Sprintf("hv%03d", h),
			StartedAt: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), Status: fleet.Pass, Collisions: []guestid.Collision{}}
		for v := range perHost {
			n := h*perHost + v
			b := realisticReport(t, n)
			if v == 0 && h%2 == 1 {
				b = bytes.Replace(b, []byte(fmt.Sprintf("%032x", n)), []byte(fmt.Sprintf("%032x", n-perHost)), 1)
			}
			// A fingerprint as ssh-keygen prints one, for the schema.
			b = bytes.Replace(b, []byte(fmt.Sprintf(`"SHA256:key%d"`, n)), []byte(fmt.Sprintf(`"SHA256:%043d"`, n)), 1)
			var rep fleet.GuestReport
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			r.VMs = append(r.VMs, fleet.VM{Name: fmt.Sprintf("vm%02d", v), Source: "libvirt", Status: fleet.Pass, Report: &rep})
		}
		var b bytes.Buffer
		if err := fleet.WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, r.Host+".json")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

// TestHelperWriteSurveys writes writeSurveys' 100 files to the directory
// in GUESTCHECK_WRITE_SURVEYS, for measuring a merge by hand
// (/usr/bin/time -v guestcheck fleet --merge DIR/*.json); it does
// nothing in an ordinary test run.
func TestHelperWriteSurveys(t *testing.T) {
	if dir := os.Getenv("GUESTCHECK_WRITE_SURVEYS"); dir != "" {
		writeSurveys(t, dir, 100, 50)
	}
}
