package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestFleetPrometheusScrape: a real Prometheus server (Debian's
// prometheus) scrapes `guestcheck fleet --listen` on loopback, and a
// query over its HTTP API returns every VM's status: two clones sharing
// a machine-id, a VM with a warning, one whose guest-exec is filtered and
// a socket without a VM. guestcheck runs as a child process (the test
// binary as guestcheck, TestHelperGuestcheck) and the agents are fakes
// in this process. Prometheus needs no root, but as root (CI) a missing
// prometheus fails the test.
func TestFleetPrometheusScrape(t *testing.T) {
	prom := testenv.Tool(t, "prometheus", "prometheus")
	dir := socketDir(t)
	id := func(mac string) *guestid.Identity {
		return &guestid.Identity{MachineIDHash: "0123456789abcdef0123456789abcdef",
			Interfaces: []guestid.Interface{{Name: "eth0", MAC: mac}}}
	}
	a := fakeGuest(t, dir, "a", &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Pass, id("52:54:00:00:00:01")))})
	b := fakeGuest(t, dir, "b", &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Pass, id("52:54:00:00:00:02")))})
	c := fakeGuest(t, dir, "c", &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Warn, nil))})
	d := fakeGuest(t, dir, "d", &qgafake.Agent{Disabled: []string{"guest-exec"}})
	// The clones pass in their own reports and fail in the fleet: they
	// share a machine-id.
	want := map[string]string{"clone-a": "fail", "clone-b": "fail", "web": "warn", "filtered": "unknown", "gone": "unknown"}

	gcAddr, promAddr := freePort(t), freePort(t)
	gc := exec.Command(os.Args[0], "-test.run=^TestHelperGuestcheck$")
	gc.Env = append(os.Environ(), "GUESTCHECK_HELPER_ARGS="+strings.Join([]string{"fleet", "--listen", gcAddr, "--interval", "2s",
		"--vm-timeout", "5s", "--agent-socket", "clone-a=" + a, "--agent-socket", "clone-b=" + b, "--agent-socket", "web=" + c,
		"--agent-socket", "filtered=" + d, "--agent-socket", "gone=" + filepath.Join(dir, "gone.qga")}, "\x1f"))
	gcLog := startLogged(t, gc, filepath.Join(dir, "guestcheck.log"))

	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: guestcheck-fleet
    static_configs:
      - targets: ['%s']
`, gcAddr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	promLog := startLogged(t, p, filepath.Join(dir, "prometheus.log"))

	start := time.Now()
	var got map[string]string
	for {
		got = queryVMStatus(t, promAddr)
		if len(got) == len(want) || time.Since(start) > 90*time.Second {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for name, st := range want {
		if got[name] != st {
			t.Errorf("Prometheus has %s %q, want %q (all: %v)", name, got[name], st, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Prometheus has %d domains after %s, want %d; guestcheck's log:\n%s\nprometheus's log:\n%s",
			len(got), time.Since(start).Round(time.Second), len(want), gcLog(), promLog())
	}
	if n := queryScalar(t, promAddr, `sum(guestcheck_fleet_collisions{item="machine-id"})`); n != "1" {
		t.Errorf("collisions of the machine-id in Prometheus = %q, want 1", n)
	}
	t.Logf("Prometheus returned every domain's status %s after start", time.Since(start).Round(time.Millisecond))
}

// freePort is a loopback address with a port nobody listens on now.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startLogged starts c with its output in logPath, and stops it (SIGTERM,
// then SIGKILL) when the test ends; the returned func reads the log.
func startLogged(t testing.TB, c *exec.Cmd, logPath string) func() string {
	t.Helper()
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	c.Stdout, c.Stderr = f, f
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
	})
	return func() string {
		b, _ := os.ReadFile(logPath)
		return string(b)
	}
}

// promQuery runs an instant query against Prometheus's HTTP API; an
// error (Prometheus still starting) is an empty result.
func promQuery(t *testing.T, addr, q string) []struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
} {
	t.Helper()
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  []any             `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Status != "success" {
		t.Fatalf("Prometheus query %s: %v: %s", q, err, b)
	}
	return r.Data.Result
}

// queryVMStatus is each domain's status in Prometheus: the status label
// of its guestcheck_fleet_vm_status series whose value is 1.
func queryVMStatus(t *testing.T, addr string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range promQuery(t, addr, `guestcheck_fleet_vm_status == 1`) {
		if s.Metric["job"] != "guestcheck-fleet" || len(s.Value) != 2 || s.Value[1] != "1" {
			t.Fatalf("unexpected series %v %v", s.Metric, s.Value)
		}
		if prev, dup := out[s.Metric["domain"]]; dup && prev != s.Metric["status"] {
			t.Fatalf("domain %s has two statuses at 1: %s and %s", s.Metric["domain"], prev, s.Metric["status"])
		}
		out[s.Metric["domain"]] = s.Metric["status"]
	}
	return out
}

// queryScalar is the value of a query with one result, or "".
func queryScalar(t *testing.T, addr, q string) string {
	t.Helper()
	r := promQuery(t, addr, q)
	if len(r) != 1 || len(r[0].Value) != 2 {
		return ""
	}
	v, _ := r[0].Value[1].(string)
	return v
}
