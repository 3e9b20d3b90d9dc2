package fleet

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

func TestParseSocket(t *testing.T) {
	for in, want := range map[string]Socket{
		"/run/qemu/web1.qga":          {"web1", "/run/qemu/web1.qga"},
		"db=/run/qemu/x.sock":         {"db", "/run/qemu/x.sock"},
		"/run/a=b/vm.sock":            {"vm", "/run/a=b/vm.sock"},
		"./noext":                     {"noext", "./noext"},
		"name with space=/tmp/s.sock": {"name with space", "/tmp/s.sock"},
	} {
		if got, err := ParseSocket(in); err != nil || got != want {
			t.Errorf("ParseSocket(%q) = %+v, %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "vm="} {
		if _, err := ParseSocket(bad); err == nil {
			t.Errorf("ParseSocket(%q) accepted", bad)
		}
	}
}

func TestFilter(t *testing.T) {
	ts := []Target{{Name: "web-1"}, {Name: "web-2"}, {Name: "db-1"}, {Name: "101"}}
	names := func(ts []Target) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.Name)
		}
		return strings.Join(s, " ")
	}
	for pats, want := range map[string]string{"": "web-1 web-2 db-1 101", "web-*": "web-1 web-2", "db-? 1[0-9]1": "db-1 101", "nothing": ""} {
		if got := names(Filter(ts, strings.Fields(pats))); got != want {
			t.Errorf("Filter(%q) = %q, want %q", pats, got, want)
		}
	}
	if CheckPattern("[") == nil || CheckPattern("web-*") != nil {
		t.Error("CheckPattern")
	}
}

// TestProxmoxSource lists <vmid>.qga sockets by VMID in numeric order,
// ignoring what is not one, and surveys them over the real socket.
func TestProxmoxSource(t *testing.T) {
	dir, err := os.MkdirTemp("", "pve")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	a := &qgafake.Agent{Run: runs(guestReport(t, runner.Pass, nil), 0)}
	for _, id := range []string{"1000", "101", "99"} {
		l, err := a.Listen(filepath.Join(dir, id+".qga"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	os.WriteFile(filepath.Join(dir, "102.qga"), nil, 0o600) // a file, not a socket
	os.WriteFile(filepath.Join(dir, "103.pid"), nil, 0o600)
	l, _ := net.Listen("unix", filepath.Join(dir, "abc.qga"))
	defer l.Close()
	ts, err := ProxmoxSource{Dir: dir}.Targets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range ts {
		got = append(got, tg.Name+"/"+tg.Source)
	}
	if strings.Join(got, " ") != "99/proxmox 101/proxmox 1000/proxmox" {
		t.Errorf("targets %v", got)
	}
	r := Survey(context.Background(), ts, nil, Options{VMTimeout: 5 * time.Second})
	if r.Summary.Pass != 3 {
		t.Errorf("survey %+v: %+v", r.Summary, r.VMs)
	}
	// --proxmox on a host without Proxmox: an error, not an empty fleet.
	absent := filepath.Join(dir, "absent")
	if ts, err := (ProxmoxSource{Dir: absent}).Targets(context.Background()); err == nil || len(ts) != 0 ||
		err.Error() != "no directory "+absent+": not a Proxmox VE host, or qemu-server is not installed" {
		t.Errorf("absent directory: %v %v", ts, err)
	}
	if _, err := (ProxmoxSource{Dir: filepath.Join(dir, "103.pid")}).Targets(context.Background()); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	if ts, err := (ProxmoxSource{Dir: empty}).Targets(context.Background()); err != nil || len(ts) != 0 {
		t.Errorf("no VM running: %v %v", ts, err)
	}
}

// TestTargetsKeepsGoing: a source that fails is a source error; the
// others are still surveyed, and the name filter applies to all.
func TestTargetsKeepsGoing(t *testing.T) {
	ts, errs := Targets(context.Background(), []Source{failing{}, SocketSource{{"web-1", "/x"}, {"db-1", "/y"}}}, []string{"web-*"})
	if len(ts) != 1 || ts[0].Name != "web-1" || len(errs) != 1 || errs[0].Source != "broken" || errs[0].Error != "cannot list: boom" {
		t.Errorf("targets %+v errors %+v", ts, errs)
	}
	r := Survey(context.Background(), nil, errs, Options{})
	if r.Status != Unknown || ExitCode(r) != 1 {
		t.Errorf("a source error: status %s", r.Status)
	}
	if r := Survey(context.Background(), nil, nil, Options{}); r.Status != Pass || ExitCode(r) != 0 {
		t.Errorf("no VMs: status %s", r.Status)
	}
}

// TestTargetsRefusesDuplicateNames: a VM whose name an earlier source
// already gave is not surveyed but a source error, so that the survey is
// unknown and no two VMs report under one name.
func TestTargetsRefusesDuplicateNames(t *testing.T) {
	ts, errs := Targets(context.Background(), []Source{SocketSource{{"100", "/a"}, {"web", "/b"}}, named{"proxmox", []Target{{Name: "100"}, {Name: "101"}}}}, nil)
	var names []string
	for _, tg := range ts {
		names = append(names, tg.Name)
	}
	want := `VM "100" not surveyed: a VM of socket has that name too (each VM needs a name of its own; --agent-socket NAME=PATH names a socket)`
	if strings.Join(names, " ") != "100 web 101" || len(errs) != 1 || errs[0].Source != "proxmox" || errs[0].Error != want {
		t.Errorf("targets %v, errors %+v", names, errs)
	}
	if r := Survey(context.Background(), nil, errs, Options{}); r.Status != Unknown || ExitCode(r) != 1 {
		t.Errorf("status %s", r.Status)
	}
}

// named is a source of fixed targets.
type named struct {
	name string
	ts   []Target
}

func (n named) Name() string                              { return n.name }
func (n named) Targets(context.Context) ([]Target, error) { return n.ts, nil }

type failing struct{}

func (failing) Name() string { return "broken" }
func (failing) Targets(context.Context) ([]Target, error) {
	return nil, errString("cannot list: boom")
}

type errString string

func (e errString) Error() string { return string(e) }

// TestSurveyDeadline: VMs whose turn comes after the survey's deadline
// are unknown, and the survey returns at its deadline.
func TestSurveyDeadline(t *testing.T) {
	var ts []Target
	for i := range 6 {
		ts = append(ts, pipeTarget(string(rune('a'+i)), &qgafake.Agent{Run: runs(guestReport(t, runner.Pass, nil), time.Hour)}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := Survey(ctx, ts, nil, Options{Concurrency: 2, VMTimeout: time.Minute})
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %s past a 500 ms deadline", el)
	}
	for _, vm := range r.VMs {
		if vm.Status != Unknown || !strings.Contains(vm.Reason, "survey's deadline (--timeout)") {
			t.Errorf("%s: %s %s", vm.Name, vm.Status, vm.Reason)
		}
	}
	// An interrupt is not a deadline.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r = Survey(ctx, ts, nil, Options{Concurrency: 2, VMTimeout: time.Minute})
	for _, vm := range r.VMs {
		if vm.Status != Unknown || !strings.Contains(vm.Reason, "the survey was interrupted") {
			t.Errorf("interrupted: %s: %s %s", vm.Name, vm.Status, vm.Reason)
		}
	}
}

// TestDialIgnoringContext: a source whose Dial never returns cannot
// hang the survey.
func TestDialIgnoringContext(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	tg := Target{Name: "stuck", Source: "test", Dial: func(context.Context) (Agent, error) { <-block; return nil, errString("late") }}
	start := time.Now()
	r := Survey(context.Background(), []Target{tg}, nil, Options{VMTimeout: 300 * time.Millisecond})
	if el := time.Since(start); el > 300*time.Millisecond+grace+time.Second {
		t.Errorf("took %s", el)
	}
	if r.VMs[0].Status != Unknown || !strings.Contains(r.VMs[0].Reason, "timed out after 300ms") {
		t.Errorf("%+v", r.VMs[0])
	}
}

// TestTargetsListTimeout: a source that does not list its VMs within
// listTimeout is a source error saying so, even one that ignores its
// context, and the sources after it are still listed.
func TestTargetsListTimeout(t *testing.T) {
	defer func(d time.Duration) { listTimeout = d }(listTimeout)
	listTimeout = 100 * time.Millisecond
	block := make(chan struct{})
	defer close(block)
	start := time.Now()
	ts, errs := Targets(context.Background(), []Source{stuck{block}, SocketSource{{"web-1", "/x"}}}, nil)
	if took := time.Since(start); took > listTimeout+grace+time.Second {
		t.Errorf("took %s", took)
	}
	want := "its VMs were not listed within 100ms: no answer"
	if len(ts) != 1 || ts[0].Name != "web-1" || len(errs) != 1 || errs[0].Source != "stuck" || errs[0].Error != want {
		t.Errorf("targets %+v errors %+v, want the error %q", ts, errs, want)
	}
}

// stuck is a source that never answers and ignores its context.
type stuck struct{ block chan struct{} }

func (stuck) Name() string { return "stuck" }
func (s stuck) Targets(context.Context) ([]Target, error) {
	<-s.block
	return nil, nil
}

// TestSocketNotASocket: --agent-socket naming a regular file or a
// directory says it is not a socket; a socket nobody listens on still
// says the VM is not running.
func TestSocketNotASocket(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "web1.qga")
	os.WriteFile(file, []byte("x"), 0o600)
	stale := filepath.Join(dir, "stale.qga")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	ts := SocketSource{{"web1", file}, {"dir", dir}, {"stale", stale}}.targets()
	r := Survey(context.Background(), ts, nil, Options{VMTimeout: 5 * time.Second})
	want := map[string]string{
		"web1":  file + " is a regular file, not a socket: name the guest agent's chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off)",
		"dir":   dir + " is a directory, not a socket: name the guest agent's chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off)",
		"stale": "guest agent not connected: connection refused (the VM is not running)",
	}
	for _, vm := range r.VMs {
		if vm.Status != Unknown || vm.Reason != want[vm.Name] {
			t.Errorf("%s: %s %q, want unknown %q", vm.Name, vm.Status, vm.Reason, want[vm.Name])
		}
	}
}
