package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/tty/ttytest"
)

// socketDir is a short directory for unix sockets (sun_path holds 108
// bytes; t.TempDir's names can be longer).
func socketDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gcfleet")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// fakeGuest serves a fake agent whose guestcheck reports st and id.
func fakeGuest(t testing.TB, dir, name string, a *qgafake.Agent) string {
	t.Helper()
	p := filepath.Join(dir, name+".qga")
	l, err := a.Listen(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return p
}

// reportOf is guestcheck's JSON report with one check of status st
// (with a remediation unless it passes or skips, as the schema asks).
func reportOf(t testing.TB, st runner.Status, id *guestid.Identity) []byte {
	t.Helper()
	fix := ""
	if st != runner.Pass && st != runner.Skip {
		fix = "set the hostname"
	}
	rep := report.New([]runner.Result{{ID: "hostname", Title: "Hostname", Status: st, Summary: "hostname " + string(st),
		Findings: []runner.Finding{runner.New(st, "hostname-x", "hostname "+string(st), nil, fix)}}},
		report.Meta{Tool: "guestcheck", Version: "1.0.0", StartedAt: time.Unix(1764417600, 0), Identity: id})
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// guestRunning answers guest-exec with out, checking guestcheck's
// command line.
func guestRunning(t testing.TB, out []byte) func(string, []string) qgafake.Program {
	return func(path string, args []string) qgafake.Program {
		if path != "/usr/bin/guestcheck" || len(args) < 3 || args[0] != "--format" || args[1] != "json" || args[2] != "--exit-zero" {
			t.Errorf("guest-exec %s %q: not guestcheck --format json --exit-zero", path, args)
		}
		return qgafake.Program{Stdout: out, Runs: 20 * time.Millisecond}
	}
}

// TestFleetAgentSockets: three VMs on agent sockets, two of them clones
// sharing machine-id and a host key, one whose guest-exec is disabled.
func TestFleetAgentSockets(t *testing.T) {
	t.Parallel()
	dir := socketDir(t)
	clone := func(addr string) *guestid.Identity {
		return &guestid.Identity{MachineIDHash: "0123456789abcdef0123456789abcdef",
			HostKeys:   []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:" + strings.Repeat("A", 43)}},
			Interfaces: []guestid.Interface{{Name: "eth0", MAC: "52:54:00:00:00:0" + addr, Addresses: []string{"10.0.2.15/24"}}}}
	}
	a := fakeGuest(t, dir, "a", &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Pass, clone("1")))})
	b := fakeGuest(t, dir, "b", &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Warn, clone("2")))})
	c := fakeGuest(t, dir, "c", &qgafake.Agent{Disabled: []string{"guest-exec"}})
	var out, errb bytes.Buffer
	code := run([]string{"fleet", "--agent-socket", "vm-a=" + a, "--agent-socket", b, "--agent-socket", c, "--format", "json",
		"--vm-timeout", "5s", "--output", "text:" + filepath.Join(dir, "out", "fleet.txt")}, &out, &errb, checks.All)
	if code != 1 || errb.Len() > 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	var r fleet.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, vm := range r.VMs {
		names = append(names, vm.Name+":"+string(vm.Status))
	}
	if got := strings.Join(names, " "); got != "b:fail vm-a:fail c:unknown" {
		t.Errorf("VMs worst first = %s", got)
	}
	var items []string
	for _, col := range r.Collisions {
		items = append(items, string(col.Item)+"="+strings.Join(col.Members, ","))
	}
	// 10.0.2.15 on both is not a collision: an agent socket names no
	// network, so their addresses are never compared.
	if got := strings.Join(items, " "); got != "machine-id=b,vm-a ssh-host-key=b,vm-a" {
		t.Errorf("collisions = %s", got)
	}
	text, err := os.ReadFile(filepath.Join(dir, "out", "fleet.txt"))
	if err != nil || !strings.Contains(string(text), "guest-exec is disabled") || !strings.Contains(string(text), "guestcheck fleet: FAIL: 3 VMs (2 fail, 1 unknown), 2 shared identity items") {
		t.Errorf("--output text: %v\n%s", err, text)
	}
}

// TestFleetUsage: mistakes on the command line exit 3 with one line.
func TestFleetUsage(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"--format jsn":                        "did you mean json",
		"--concurrency 0":                     "--concurrency \"0\": must be a whole number",
		"--vm-timeout 5":                      "not a duration",
		"--name [":                            "--name \"[\": not a pattern",
		"--guestcheck-path guestcheck":        "must be an absolute path",
		"--interval 1m":                       "--interval needs --listen",
		"--freeze-drill-results /x.json":      "--freeze-drill-results needs --listen; without it, let node_exporter read the drill's own textfile (guestcheck freeze-drill --output prometheus:FILE)",
		"--listen :9 --freeze-drill-results=": "--freeze-drill-results: no file name (the drill's --output json:FILE)",
		"--listen localhost":                  `--listen "localhost": not HOST:PORT (such as 127.0.0.1:9847, or :9847 for every address)`,
		"--listen 127.0.0.1:":                 `--listen "127.0.0.1:": not HOST:PORT`,
		"--listen [::1]":                      `--listen "[::1]": not HOST:PORT`,
		"--output yaml:/x":                    "--output yaml:/x",
		"vm1":                                 "unexpected argument",
		"--agent-socket=":                     "no socket path",
		"--agent-socket /b/nonexistent.qga":   "--agent-socket /b/nonexistent.qga: the name nonexistent is already that of /nonexistent.qga; give each socket a name of its own (NAME=PATH)",
	} {
		var out, errb bytes.Buffer
		code := run(append([]string{"fleet", "--agent-socket", "/nonexistent.qga"}, strings.Fields(args)...), &out, &errb, checks.All)
		if code != report.ExitUsage || !strings.Contains(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q, want 3 and %q", args, code, errb.String(), want)
		}
	}
}

// TestFleetProgress: on a terminal, stderr shows a progress line that
// is cleared at the end; off one, stderr stays empty (TestFleetAgentSockets).
func TestFleetProgress(t *testing.T) {
	dir := socketDir(t)
	var args []string
	for _, n := range []string{"a", "b"} {
		args = append(args, "--agent-socket", fakeGuest(t, dir, n, &qgafake.Agent{Run: guestRunning(t, reportOf(t, runner.Pass, nil))}))
	}
	ctl, term := ttytest.Open(t, 80, 24)
	var out bytes.Buffer
	if code := run(append([]string{"fleet"}, args...), &out, term, checks.All); code != 0 {
		t.Errorf("exit %d:\n%s", code, out.String())
	}
	term.Close()
	b, _ := ttytest.ReadAll(ctl)
	if s := string(b); !strings.Contains(s, "surveyed 2/2 VMs") || !strings.HasSuffix(s, "\r\x1b[K") {
		t.Errorf("progress on the terminal: %q", s)
	}
	if !strings.Contains(out.String(), "guestcheck fleet: PASS: 2 VMs (2 pass)") {
		t.Errorf("stdout:\n%s", out.String())
	}
}

// TestFleetNamedSourceMissing: --proxmox on a host without Proxmox is
// not an empty fleet that passes but a source that cannot be found:
// unknown, exit 1, with the reason on the source's line.
func TestFleetNamedSourceMissing(t *testing.T) {
	old := fleet.ProxmoxDir
	fleet.ProxmoxDir = filepath.Join(t.TempDir(), "qemu-server")
	defer func() { fleet.ProxmoxDir = old }()
	var out, errb bytes.Buffer
	code := run([]string{"fleet", "--proxmox"}, &out, &errb, checks.All)
	want := "source proxmox: no directory " + fleet.ProxmoxDir + ": not a Proxmox VE host, or qemu-server is not installed\nguestcheck fleet: UNKNOWN: 0 VMs, 1 source unreadable in "
	if code != report.ExitProblem || errb.Len() > 0 || !strings.HasPrefix(out.String(), want) {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant exit 1 and:\n%s", code, errb.String(), out.String(), want)
	}
}

// TestFleetNameExample: the --help example that says "Proxmox VMs 100 to
// 199" selects those and no other VMID.
func TestFleetNameExample(t *testing.T) {
	var pattern string
	for _, ex := range fleetCommand(func() []string { return nil }).Examples {
		if strings.Contains(ex.Comment, "100 to 199") {
			_, rest, _ := strings.Cut(ex.Command, "--name '")
			pattern, _, _ = strings.Cut(rest, "'")
		}
	}
	if pattern == "" {
		t.Fatal("no example for VMs 100 to 199")
	}
	var ts []fleet.Target
	for _, id := range []int{1, 10, 19, 99, 100, 150, 199, 200, 1000, 1999} {
		ts = append(ts, fleet.Target{Name: strconv.Itoa(id)})
	}
	var got []string
	for _, tg := range fleet.Filter(ts, []string{pattern}) {
		got = append(got, tg.Name)
	}
	if g := strings.Join(got, " "); g != "100 150 199" {
		t.Errorf("--name %q selects %s, want 100 150 199", pattern, g)
	}
}

// TestFleetOutputFormatFromExtension: a fleet --output with no FMT:
// takes the format its extension names, else --format's.
func TestFleetOutputFormatFromExtension(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	var out, errb bytes.Buffer
	code := run([]string{"fleet", "--agent-socket", p("absent.qga"), "--vm-timeout", "5s",
		"--output", p("f.json"), "--output", p("f.prom"), "--output", p("f.xml"), "--output", p("f.txt"), "--output", p("f.tap")}, &out, &errb, checks.All)
	if code != 1 || errb.Len() > 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	for name, start := range map[string]string{"f.json": "{", "f.prom": "# HELP", "f.xml": "<?xml", "f.txt": "VM ", "f.tap": "VM "} {
		b, err := os.ReadFile(p(name))
		if err != nil || !strings.HasPrefix(string(b), start) {
			t.Errorf("%s: starts %.40q (%v), want %q", name, b, err, start)
		}
	}
}
