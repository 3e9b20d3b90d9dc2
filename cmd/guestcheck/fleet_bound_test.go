package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// realisticReport is fleettest's report of a real guest's size, with
// VM i's own identity, as JSON.
func realisticReport(t testing.TB, i int) []byte {
	t.Helper()
	id := &guestid.Identity{MachineIDHash: fmt.Sprintf("%032x", i), Hostname: fmt.Sprintf("vm%d", i),
		HostKeys:   []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: fmt.Sprintf("SHA256:%043d", i)}},
		Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: fmt.Sprintf("52:54:00:00:%02x:%02x", i/256, i%256), Addresses: []string{"192.0.2.10/24"}}}}
	b, err := json.Marshal(fleettest.RealisticReport(id))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fleetOf serves n fake agents on sockets in a new directory: each
// answers within 50 to 300 ms, and one in twenty (every 20th) hangs in
// guest-exec-status. It returns guestcheck fleet's --agent-socket
// arguments.
func fleetOf(t testing.TB, n int) []string {
	t.Helper()
	dir := socketDir(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var args []string
	for i := range n {
		out := realisticReport(t, i)
		// Five replies (sync, ping, info, exec, status) share the time.
		a := &qgafake.Agent{Delay: time.Duration(50+rng.IntN(251)) * time.Millisecond / 5,
			Run: func(string, []string) qgafake.Program { return qgafake.Program{Stdout: out} }}
		if i%20 == 19 {
			a.HangOn = "guest-exec-status"
		}
		args = append(args, "--agent-socket", fakeGuest(t, dir, fmt.Sprintf("vm%03d", i), a))
	}
	return args
}

// childUsage is a child's resource use.
type childUsage struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes
}

// buildGuestcheck builds the real static binary, without the race
// detector whatever the test runs with, so that its figures are the
// product's.
func buildGuestcheck(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "guestcheck")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runChild runs the guestcheck binary bin with args and returns its
// stdout, resource use and exit code. It goes through a small launcher
// (TestHelperMeasure): a child started by os/exec shares this process's
// memory until it execs (vfork), and Linux counts that in the child's
// peak RSS, so the test's own 500 agents would be measured too.
func runChild(t testing.TB, bin string, args []string) ([]byte, childUsage, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMeasure$")
	cmd.Env = append(os.Environ(), "GUESTCHECK_MEASURE="+strings.Join(append([]string{bin}, args...), "\x1f"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("launcher: %v: %s", err, errb.String())
	}
	var u childUsage
	var code int
	var wall, cpu time.Duration
	stderr, _, _ := strings.Cut(errb.String(), "measure: ")
	if _, err := fmt.Sscanf(errb.String()[len(stderr):], "measure: exit %d wall %d cpu %d maxrss %d\n", &code, &wall, &cpu, &u.maxRSS); err != nil {
		t.Fatalf("launcher: %v: %s", err, errb.String())
	}
	u.wall, u.cpu = wall, cpu
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
	return out.Bytes(), u, code
}

// TestHelperMeasure is runChild's launcher: it runs the command in
// GUESTCHECK_MEASURE, passes its output on, and reports its exit code,
// wall and CPU time and peak RSS on the last line of stderr. It does
// nothing in an ordinary test run.
func TestHelperMeasure(t *testing.T) {
	argv := os.Getenv("GUESTCHECK_MEASURE")
	if argv == "" {
		return
	}
	args := strings.Split(argv, "\x1f")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errorsAs(err, &ee) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Fprintf(os.Stderr, "measure: exit %d wall %d cpu %d maxrss %d\n", cmd.ProcessState.ExitCode(), wall, ru.Utime.Nano()+ru.Stime.Nano(), ru.Maxrss*1024)
	os.Exit(0)
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// TestFleetBound is the benchmark as a test: 500 agents, 16 at a
// time, each taking 50 to 300 ms and 5% hanging past --vm-timeout. The
// survey must finish within vm-timeout x ceil(500/16) + 10%, with every
// VM in its result; the figures (wall, CPU, peak RSS of the guestcheck
// process) are logged, and are in docs/fleet.md.
func TestFleetBound(t *testing.T) {
	if testing.Short() {
		t.Skip("surveys 500 fake agents (about 10 s)")
	}
	const n, conc, vmTimeout = 500, 16, 2 * time.Second
	bin := buildGuestcheck(t)
	args := append([]string{"fleet", "--format", "json", "--concurrency", fmt.Sprint(conc), "--vm-timeout", vmTimeout.String()}, fleetOf(t, n)...)
	out, u, code := runChild(t, bin, args)
	bound := time.Duration(float64(vmTimeout) * float64((n+conc-1)/conc) * 1.1)
	t.Logf("fleet of %d agents, --concurrency %d, --vm-timeout %s: wall %s, CPU %s, peak RSS %.1f MiB (bound %s)",
		n, conc, vmTimeout, u.wall.Round(time.Millisecond), u.cpu.Round(time.Millisecond), float64(u.maxRSS)/(1<<20), bound)
	if u.wall > bound {
		t.Errorf("survey took %s, over the bound %s", u.wall, bound)
	}
	var r fleet.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %.200s", err, out)
	}
	if code != 1 || r.Summary.VMs != n || len(r.Collisions) != 0 {
		t.Errorf("exit %d, summary %+v, %d collisions", code, r.Summary, len(r.Collisions))
	}
	for _, vm := range r.VMs {
		var i int
		fmt.Sscanf(vm.Name, "vm%d", &i)
		hangs := i%20 == 19
		switch {
		case hangs && (vm.Status != fleet.Unknown || !strings.Contains(vm.Reason, "timed out after 2s")):
			t.Errorf("%s hangs: %s %s", vm.Name, vm.Status, vm.Reason)
		case !hangs && vm.Status != fleet.Pass && !raceEnabled:
			// Under the race detector the fake agents themselves may be
			// too slow to answer in time.
			t.Errorf("%s: %s %s", vm.Name, vm.Status, vm.Reason)
		}
	}
	if u.maxRSS > 96<<20 {
		t.Errorf("peak RSS %d MiB: memory must not grow past the reports' size", u.maxRSS>>20)
	}
}

// TestFleetListen runs guestcheck fleet --listen as its own process:
// the first scrape comes before the first survey ends and says so, later
// ones serve the survey, /healthz answers, and SIGTERM ends it with 0.
func TestFleetListen(t *testing.T) {
	dir := socketDir(t)
	slow := &qgafake.Agent{Run: func(string, []string) qgafake.Program {
		return qgafake.Program{Stdout: reportOf(t, runner.Pass, nil), Runs: 600 * time.Millisecond}
	}}
	prom := filepath.Join(dir, "out", "fleet.prom")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperGuestcheck$")
	cmd.Env = append(os.Environ(), "GUESTCHECK_HELPER_ARGS="+strings.Join([]string{"fleet", "--listen", "127.0.0.1:0", "--interval", "100ms",
		"--agent-socket", "slow=" + fakeGuest(t, dir, "slow", slow), "--output", "prometheus:" + prom}, "\x1f"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stderr).ReadString('\n')
	var addr string
	if _, e := fmt.Sscanf(line, "guestcheck fleet: serving /metrics on %s", &addr); err != nil || e != nil {
		t.Fatalf("first line %q: %v %v", line, err, e)
	}
	addr = strings.TrimSuffix(addr, ",")
	get := func(p string) (int, string) {
		resp, err := http.Get("http://" + addr + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != 503 || !strings.Contains(body, "first survey has not finished") {
		t.Errorf("first scrape: %d %q", code, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, body := get("/metrics")
		if code == 200 {
			if !strings.Contains(body, `guestcheck_fleet_vm_status{domain="slow",status="pass"} 1`) {
				t.Errorf("metrics:\n%s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no survey after 20 s: %d %s", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body := get("/healthz"); code != 200 || !strings.HasPrefix(body, "ok") {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if b, err := os.ReadFile(prom); err != nil || !strings.Contains(string(b), "guestcheck_fleet_vm_status") {
		t.Errorf("--output after a survey: %v", err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go io.Copy(io.Discard, stderr)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}
