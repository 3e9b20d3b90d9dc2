package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/fleet/kubevirt/kubevirtfake"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// harvesterClone is a cluster where web-1 was cloned (Harvester's Clone
// keeps the firmware UUID) and the clone runs on another node, beside a
// VM with a UUID of its own whose agent blocks guest-exec, and a stopped
// VM KubeVirt has not yet given a UUID.
func harvesterClone() *kubevirtfake.Server {
	const shared = "9b2c4e1a-7d3f-4c5b-a1e2-3f4d5c6b7a80"
	return &kubevirtfake.Server{
		VMs: []any{
			kubevirtfake.VM("prod", "web-1", shared, "52:54:00:6b:01:01"),
			kubevirtfake.VM("prod", "web-1-clone", shared, "52:54:00:6b:01:02"),
			kubevirtfake.VM("prod", "db-1", "2f0e8c6a-5b4d-4e3c-9a1b-0c2d4e6f8a9b", "52:54:00:6b:02:01"),
			kubevirtfake.Stopped(kubevirtfake.VM("dev", "scratch", "")),
		},
		VMIs: []any{
			kubevirtfake.VMI("prod", "web-1", "harvester-node-1", shared, true, "52:54:00:6b:01:01"),
			kubevirtfake.VMI("prod", "web-1-clone", "harvester-node-2", shared, true, "52:54:00:6b:01:02"),
			kubevirtfake.VMI("prod", "db-1", "harvester-node-1", "2f0e8c6a-5b4d-4e3c-9a1b-0c2d4e6f8a9b", true, "52:54:00:6b:02:01"),
		},
		GuestInfo: map[string]any{
			"prod/web-1":       kubevirtfake.GuestInfo("web-1"),
			"prod/web-1-clone": kubevirtfake.GuestInfo("web-1-clone"),
			"prod/db-1":        kubevirtfake.GuestInfo("db-1", "guest-exec", "guest-exec-status", "guest-file-open", "guest-file-write"),
		},
	}
}

// TestFleetKubevirtBinary runs the real guestcheck binary against a fake
// API server: two VMs that share a firmware UUID on different nodes are
// one finding, read from the API alone, with no guest access at all.
func TestFleetKubevirtBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	bin := buildGuestcheck(t)
	s := harvesterClone()
	srv := s.Start(t)
	dir := t.TempDir()
	kc := kubevirtfake.Kubeconfig(t, srv, dir)
	cmd := exec.Command(bin, "fleet", "--kubevirt", "--kubeconfig", kc, "--format", "json", "--output", "text:"+filepath.Join(dir, "fleet.txt"))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || stderr.Len() > 0 {
		t.Fatalf("exit %v, stderr %q", err, stderr.String())
	}
	var r fleet.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if msg := testenv.Validate(testenv.Schema(t, "../../schema", "fleet-v1.schema.json"), out); msg != "" {
		t.Errorf("JSON output against schema/fleet-v1.schema.json: %s", msg)
	}
	if len(r.Collisions) != 1 || r.Collisions[0].Item != "firmware-uuid" || strings.Join(r.Collisions[0].Members, " ") != "prod/web-1 prod/web-1-clone" {
		t.Fatalf("collisions %+v, want the one firmware UUID of prod/web-1 and prod/web-1-clone", r.Collisions)
	}
	var got []string
	for _, vm := range r.VMs {
		got = append(got, vm.Name+"@"+vm.Host+":"+string(vm.Status))
		if vm.Report != nil || vm.Source != "kubevirt" {
			t.Errorf("%s: a guest report, or source %q", vm.Name, vm.Source)
		}
	}
	if g := strings.Join(got, " "); g != "prod/web-1@harvester-node-1:fail prod/web-1-clone@harvester-node-2:fail dev/scratch@:skip prod/db-1@harvester-node-1:skip" {
		t.Errorf("VMs: %s", g)
	}
	for _, q := range s.Queries {
		if !strings.HasPrefix(q, "/apis/kubevirt.io/v1/") && !strings.HasSuffix(q, "/guestosinfo?") {
			t.Errorf("asked %s: the source reads the lists and guestosinfo only", q)
		}
	}
	text, err := os.ReadFile(filepath.Join(dir, "fleet.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The duration varies; the docs show the run's shape.
	shown := string(text)
	if i := strings.LastIndex(shown, " in "); i > 0 {
		shown = shown[:i] + " in 0.1 s\n"
	}
	testenv.GeneratedBlock(t, "../../docs/fleet.md", "fleet-kubevirt", "```\n"+shown+"```\n", *update)
}

// TestFleetKubevirtUsage: the cluster options need --kubevirt, and a
// kubeconfig that cannot be used is a source error (exit 1), one line.
func TestFleetKubevirtUsage(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if code := run([]string{"fleet", "--kubeconfig", "/x"}, &out, &errb, checks.All); code != report.ExitUsage || !strings.Contains(errb.String(), "--kubeconfig needs --kubevirt") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	kc := filepath.Join(t.TempDir(), "config")
	os.WriteFile(kc, []byte("users:\n- name: u\n  user:\n    exec: {command: kubelogin}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- name: k\n  cluster: {server: \"https://127.0.0.1:1\"}\ncurrent-context: c\n"), 0o600)
	code := run([]string{"fleet", "--kubevirt", "--kubeconfig", kc}, &out, &errb, checks.All)
	want := "source kubevirt: kubeconfig " + kc + ": line 4: user u uses a credential plugin (exec)"
	if code != report.ExitProblem || !strings.Contains(out.String(), want) {
		t.Errorf("exit %d, stdout %q, want %q", code, out.String(), want)
	}
}

// TestFleetKubevirtEndless: an API server whose list never ends, a page
// at a time, costs the survey its --timeout and no more: the source is
// unreadable with the reason, and the summary says how long it took.
func TestFleetKubevirtEndless(t *testing.T) {
	t.Parallel()
	srv := (&kubevirtfake.Server{Endless: true, PageDelay: 20 * time.Millisecond}).Start(t)
	kc := kubevirtfake.Kubeconfig(t, srv, t.TempDir())
	var out, errb bytes.Buffer
	start := time.Now()
	code := run([]string{"fleet", "--kubevirt", "--kubeconfig", kc, "--timeout", "1s"}, &out, &errb, checks.All)
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("took %s with --timeout 1s", took)
	}
	want := "source kubevirt: the survey's deadline (--timeout) came while its VMs were listed: API server " + srv.URL + " (kubeconfig " + kc + ", context test): GET /apis/kubevirt.io/v1/virtualmachines: no answer in time, on page "
	if code != report.ExitProblem || !strings.Contains(out.String(), want) || errb.Len() > 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, out.String(), errb.String(), want)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "guestcheck fleet: UNKNOWN: 0 VMs, 1 source unreadable in 1.") {
		t.Errorf("summary %q, want the second the listing took", last)
	}
}
