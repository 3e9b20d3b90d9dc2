package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/host/drill"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestFleetListenServesFreezeDrill is docs/freeze-drill.md's worked
// example on loopback: the drill's timer runs freeze-drill --output
// json:FILE, and guestcheck fleet --listen --freeze-drill-results FILE
// (a child process) serves that drill's series beside its survey's,
// without freezing anything itself; once the file is gone it serves
// guestcheck_freeze_drill_results_ok 0 and no drill series, and logs
// one line naming the file.
func TestFleetListenServesFreezeDrill(t *testing.T) {
	dir := socketDir(t)
	g := &qgafake.Guest{FS: []qgafake.FS{{Name: "vda", Mountpoint: "/", Type: "ext4"}}, OSID: "debian"}
	a := &qgafake.Agent{Guest: g, Run: func(string, []string) qgafake.Program {
		return qgafake.Program{Stdout: reportOf(t, runner.Pass, nil)}
	}}
	sock := fakeGuest(t, dir, "db1", a)
	results := filepath.Join(dir, "freeze-drill.json")
	var out, errb bytes.Buffer
	if code := run([]string{"freeze-drill", "--agent-socket", "db1=" + sock, "--deadline", "5s", "--output", "json:" + results}, &out, &errb, checks.All); code == 3 || errb.Len() != 0 {
		t.Fatalf("freeze-drill: exit %d, stderr %q", code, errb.String())
	}
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	var r drill.Result
	if err := json.Unmarshal(b, &r); err != nil || len(r.VMs) != 1 || !r.VMs[0].Froze || g.Thaws() != 1 {
		t.Fatalf("the drill: %v, %+v, %d thaws", err, r.VMs, g.Thaws())
	}

	addr := freePort(t)
	gc := exec.Command(os.Args[0], "-test.run=^TestHelperGuestcheck$")
	gc.Env = append(os.Environ(), "GUESTCHECK_HELPER_ARGS="+strings.Join([]string{"fleet", "--listen", addr, "--interval", "1s",
		"--vm-timeout", "5s", "--agent-socket", "db1=" + sock, "--freeze-drill-results", results}, "\x1f"))
	log := startLogged(t, gc, filepath.Join(dir, "guestcheck.log"))
	metrics := func() string {
		cl := http.Client{Timeout: 5 * time.Second}
		resp, err := cl.Get("http://" + addr + "/metrics")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if resp.StatusCode != http.StatusOK {
			return ""
		}
		return string(body)
	}
	var m string
	for start := time.Now(); m == "" && time.Since(start) < 30*time.Second; time.Sleep(100 * time.Millisecond) {
		m = metrics()
	}
	for _, want := range []string{
		`guestcheck_fleet_vm_status{domain="db1",status="pass"} 1`,
		`guestcheck_freeze_drill_status{vm="db1",source="socket",status="` + string(r.VMs[0].Status) + `"} 1`,
		`guestcheck_freeze_drill_filesystems_frozen{vm="db1",source="socket"} 1`,
		drill.ResultsMetric + " 1\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s:\n%s\nlog:\n%s", want, m, log())
		}
	}
	// Surveys go on (one a second) and scrapes too: the drill's one
	// freeze stays the only one.
	time.Sleep(2500 * time.Millisecond)
	metrics()
	if n := countOf(a.Calls(), "guest-fsfreeze-freeze"); n != 1 || g.Thaws() != 1 || g.Frozen() {
		t.Errorf("%d freezes and %d thaws after fleet surveyed and was scraped: fleet froze", n, g.Thaws())
	}

	if err := os.Remove(results); err != nil {
		t.Fatal(err)
	}
	m = metrics()
	if strings.Contains(m, "guestcheck_freeze_drill_status{") || !strings.Contains(m, drill.ResultsMetric+" 0\n") || !strings.Contains(m, "guestcheck_fleet_vm_status{") {
		t.Errorf("/metrics with the drill's file gone:\n%s", m)
	}
	l := log()
	for _, want := range []string{
		"guestcheck fleet: serving /metrics on " + addr + ", surveying every 1s, with the last freeze drill's series from " + results + "\n",
		"guestcheck fleet: --freeze-drill-results " + results + ": no such file or directory; serving guestcheck_freeze_drill_results_ok 0 and no drill series until the file holds a drill's result\n",
	} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %q:\n%s", want, l)
		}
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, c := range s {
		if c == v {
			n++
		}
	}
	return n
}
