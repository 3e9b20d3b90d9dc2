package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// surveyedVM is a surveyed VM with guestReport's report of status st and
// identity id, its NICs on nets.
func surveyedVM(t testing.TB, name string, st runner.Status, id *guestid.Identity, nets map[string]string) VM {
	t.Helper()
	var rep GuestReport
	if err := json.Unmarshal(guestReport(t, st, id), &rep); err != nil {
		t.Fatal(err)
	}
	return VM{Name: name, Source: "libvirt", Status: Status(st), Report: &rep, Networks: nets}
}

// writeSurvey writes host's survey of vms, as guestcheck fleet --format
// json on that host would, to dir/file.
func writeSurvey(t testing.TB, dir, file, host string, vms []VM, srcErrs ...SourceError) string {
	t.Helper()
	r := Result{SchemaVersion: SchemaVersion, Tool: "guestcheck fleet", Version: "1.0.0", Host: host,
		StartedAt: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), SourceErrors: srcErrs, VMs: vms}
	r.finish()
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ident(mid, mac, addr string) *guestid.Identity {
	return &guestid.Identity{MachineIDHash: mid, Hostname: "h-" + strings.ReplaceAll(mac, ":", ""),
		Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: mac, Addresses: []string{addr + "/24"}}}}
}

// twoHosts: vm-alpha on hv-a and vm-bravo on hv-b share a machine-id;
// vm-charlie (hv-a) shares nothing; each host has a "web" of its own.
// Every NIC is on its host's libvirt network "default"; vm-alpha and
// vm-bravo have one address, and so have the two webs.
func twoHosts(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	def := func(mac string) map[string]string { return map[string]string{mac: "default"} }
	const shared = "0123456789abcdef0123456789abcdef"
	a := writeSurvey(t, dir, "hv-a.json", "hv-a", []VM{
		surveyedVM(t, "vm-alpha", runner.Pass, ident(shared, "52:54:00:00:0a:01", "192.0.2.10"), def("52:54:00:00:0a:01")),
		surveyedVM(t, "vm-charlie", runner.Pass, ident("cccccccccccccccccccccccccccccccc", "52:54:00:00:0a:02", "192.0.2.11"), def("52:54:00:00:0a:02")),
		surveyedVM(t, "web", runner.Pass, ident("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "52:54:00:00:0a:03", "192.0.2.12"), def("52:54:00:00:0a:03")),
	})
	b := writeSurvey(t, dir, "hv-b.json", "hv-b", []VM{
		surveyedVM(t, "vm-bravo", runner.Pass, ident(shared, "52:54:00:00:0b:01", "192.0.2.10"), def("52:54:00:00:0b:01")),
		surveyedVM(t, "web", runner.Pass, ident("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "52:54:00:00:0b:03", "192.0.2.12"), def("52:54:00:00:0b:03")),
	})
	return a, b
}

func TestMergeAcrossHosts(t *testing.T) {
	a, b := twoHosts(t)
	r, err := Merge([]string{a, b}, MergeOptions{HostName: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Collisions) != 1 {
		t.Fatalf("collisions %+v, want one machine-id", r.Collisions)
	}
	c := r.Collisions[0]
	if c.Item != guestid.ItemMachineID || !slices.Equal(c.Members, []string{"vm-alpha@hv-a", "vm-bravo@hv-b"}) {
		t.Errorf("collision %+v", c)
	}
	status := map[string]Status{}
	for _, vm := range r.VMs {
		status[vm.ID()] = vm.Status
	}
	want := map[string]Status{"vm-alpha@hv-a": Fail, "vm-bravo@hv-b": Fail, "vm-charlie@hv-a": Pass, "web@hv-a": Pass, "web@hv-b": Pass}
	if !maps(status, want) {
		t.Errorf("statuses %v, want %v", status, want)
	}
	if r.Status != Fail || ExitCode(r) != 1 || len(r.Hosts) != 2 || r.Hosts[1].Host != "hv-b" || r.Hosts[1].VMs != 2 {
		t.Errorf("status %s, exit %d, hosts %+v", r.Status, ExitCode(r), r.Hosts)
	}
	text := string(render(t, r, FormatText))
	for _, w := range []string{"vm-alpha@hv-a", "vm-bravo@hv-b", "machine-id hash 01234567...: vm-alpha@hv-a, vm-bravo@hv-b", "5 VMs on 2 hosts"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
	prom := string(render(t, r, FormatPrometheus))
	if !strings.Contains(prom, `guestcheck_fleet_vm_shared_identity{domain="vm-bravo",host="hv-b",item="machine-id"} 1`) {
		t.Errorf("metrics lack the host label:\n%s", prom)
	}
	junit := string(render(t, r, FormatJUnit))
	if !strings.Contains(junit, `name="vm-alpha@hv-a"`) || !strings.Contains(junit, `hostname="hv-b"`) {
		t.Errorf("junit:\n%s", junit)
	}
}

func maps(a, b map[string]Status) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestMergeNetworksAreTheHosts: the same address on libvirt's "default"
// of two hosts is two NAT networks, unless the operator says the
// network is one.
func TestMergeNetworksAreTheHosts(t *testing.T) {
	a, b := twoHosts(t)
	r, err := Merge([]string{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Collisions {
		if c.Item == guestid.ItemAddress {
			t.Errorf("address on two hosts' default networks collides: %+v", c)
		}
	}
	r, err = Merge([]string{a, b}, MergeOptions{SharedNetworks: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	var addr []guestid.Collision
	for _, c := range r.Collisions {
		if c.Item == guestid.ItemAddress {
			addr = append(addr, c)
		}
	}
	if len(addr) != 2 || addr[0].Value != "192.0.2.10 (default)" || !slices.Equal(addr[1].Members, []string{"web@hv-a", "web@hv-b"}) {
		t.Errorf("shared network: %+v", addr)
	}
}

// TestMergeOutputIsASurvey: the merged JSON is a fleet survey under the
// schema, with each VM's full report read again from its file, and it
// can itself be merged.
func TestMergeOutputIsASurvey(t *testing.T) {
	a, b := twoHosts(t)
	r, err := Merge([]string{a, b}, MergeOptions{HostName: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, r, FormatJSON)
	if msg := testenv.Validate(compileFleetSchema(t), out); msg != "" {
		t.Fatalf("merged JSON invalid: %s", msg)
	}
	var doc struct {
		VMs []VM `json:"vms"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for _, vm := range doc.VMs {
		if vm.Host == "" || vm.Report == nil || len(vm.Report.Checks) != 2 || vm.Report.Checks[0].Findings == nil {
			t.Errorf("VM %s: host %q, report %+v", vm.Name, vm.Host, vm.Report)
		}
	}
	again := filepath.Join(t.TempDir(), "all.json")
	if err := os.WriteFile(again, out, 0o644); err != nil {
		t.Fatal(err)
	}
	r2, err := Merge([]string{again}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]string{again, b}, MergeOptions{}); err == nil || err.Error() != again+" and "+b+" both hold VM vm-bravo@hv-b: merge one survey per host" {
		t.Errorf("a merge merged again with one of its hosts: %v", err)
	}
	if len(r2.Collisions) != 1 || !slices.Equal(r2.Collisions[0].Members, r.Collisions[0].Members) {
		t.Errorf("merged again: %+v", r2.Collisions)
	}
}

// TestMergeUnknownIsNotAPass: a VM its host could not survey stays
// unknown, a report without an identity cannot be compared (warn), and
// a host's unreadable source is carried with its host.
func TestMergeUnknownIsNotAPass(t *testing.T) {
	dir := t.TempDir()
	p := writeSurvey(t, dir, "hv-c.json", "", []VM{
		{Name: "down", Source: "libvirt", Status: Unknown, Reason: "guest agent not responding within 10s"},
		surveyedVM(t, "old", runner.Pass, nil, nil),
	}, SourceError{Source: "proxmox", Error: "open /var/run/qemu-server: permission denied"})
	r, err := Merge([]string{p}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, vm := range r.VMs {
		got[vm.ID()] = string(vm.Status) + ": " + vm.Reason
	}
	if !strings.HasPrefix(got["down@hv-c"], "unknown: guest agent not responding") || !strings.HasPrefix(got["old@hv-c"], "warn: its report carries no identity") {
		t.Errorf("VMs (host from the file's name): %q", got)
	}
	if r.Status != Unknown || ExitCode(r) != 1 || len(r.SourceErrors) != 1 || r.SourceErrors[0].Source != "proxmox@hv-c" {
		t.Errorf("status %s, source errors %+v", r.Status, r.SourceErrors)
	}
}

func TestMergeRefusesTheSameSurveyTwice(t *testing.T) {
	a, b := twoHosts(t)
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	_, err := Merge([]string{a, b, link}, MergeOptions{})
	if err == nil || err.Error() != a+" and "+link+" are the same file: merge each host's survey once" {
		t.Errorf("same file twice: %v", err)
	}
	copyA := filepath.Join(t.TempDir(), "hv-a-old.json")
	data, _ := os.ReadFile(a)
	os.WriteFile(copyA, data, 0o644)
	_, err = Merge([]string{a, b, copyA}, MergeOptions{})
	if err == nil || err.Error() != a+" and "+copyA+" are both the survey of host hv-a: merge one survey per host" {
		t.Errorf("one host twice: %v", err)
	}
}

// TestMergeBadFiles: a survey is hostile input; each error is one line
// naming the file and, where it can, the line.
func TestMergeBadFiles(t *testing.T) {
	a, _ := twoHosts(t)
	good, _ := os.ReadFile(a)
	dir := t.TempDir()
	cases := badSurveys(good)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Merge([]string{p}, MergeOptions{MaxFileSize: 1 << 20})
			if err == nil {
				t.Fatal("merged")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, p+": ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line naming the file with %q", msg, tc.want)
			}
		})
	}
	if _, err := Merge([]string{dir}, MergeOptions{}); err == nil || err.Error() != dir+": not a regular file" {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Merge([]string{filepath.Join(dir, "nope.json")}, MergeOptions{}); err == nil || !strings.HasSuffix(err.Error(), "nope.json: no such file or directory") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestMergeRefusesAFileChangedMeanwhile: reports are read again for the
// JSON output; a file rewritten in between is refused, not mixed.
func TestMergeRefusesAFileChangedMeanwhile(t *testing.T) {
	a, b := twoHosts(t)
	r, err := Merge([]string{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(b)
	os.WriteFile(b, bytes.Replace(data, []byte(`"fstab-ok"`), []byte(`"fstab-OK"`), -1), 0o644)
	var out bytes.Buffer
	if err := WriteJSON(&out, r); err == nil || err.Error() != b+" changed while it was merged: merge again" {
		t.Errorf("changed file: %v", err)
	}
}

// TestOneValueAmongMany: a hostname every VM keeps (localhost) is one
// collision naming them all, while each VM's reason names five and
// counts the others up to a bound.
func TestOneValueAmongMany(t *testing.T) {
	var vms []VM
	for i := range 150 {
		id := &guestid.Identity{MachineIDHash: fmt.Sprintf("%032x", i), Hostname: "localhost"}
		vms = append(vms, surveyedVM(t, fmt.Sprintf("vm%03d", i), runner.Pass, id, nil))
	}
	r := Result{VMs: vms[:8]}
	r.finish()
	if len(r.Collisions) != 1 || r.VMs[0].Reason != "shares hostname with vm001, vm002, vm003, vm004, vm005 and 2 others" {
		t.Errorf("8 VMs: %d collisions, reason %q", len(r.Collisions), r.VMs[0].Reason)
	}
	r = Result{VMs: vms}
	r.finish()
	if len(r.Collisions) != 1 || len(r.Collisions[0].Members) != 150 || r.VMs[149].Reason != "shares hostname with vm000, vm001, vm002, vm003, vm004 and over 95 others" {
		t.Errorf("150 VMs: %d collisions, reason %q", len(r.Collisions), r.VMs[149].Reason)
	}
}

// badSurveys are survey files a merge refuses, made from the good
// survey good, each with what its error says.
func badSurveys(good []byte) []struct{ name, content, want string } {
	return []struct{ name, content, want string }{
		{"truncated", string(good[:200]), "line 10, column 10: not JSON: unexpected end of JSON input"},
		{"garbage", "{\n  \"schema_version\": 1,\n  tool\n}", "line 3, column 3: not JSON: invalid character 't'"},
		{"in-vm", strings.Replace(string(good), `"source":"libvirt"`, `"source":libvirt`, 1), "line 21, column 33: not JSON: invalid character 'l'"},
		{"report", `{"schema_version": 1, "tool": "guestcheck", "checks": []}`, `not a guestcheck fleet survey (tool "guestcheck")`},
		{"version", `{"schema_version": 2, "tool": "guestcheck fleet"}`, "a fleet survey of schema_version 2, and this guestcheck reads 1"},
		{"type", `{"schema_version": 1, "tool": "guestcheck fleet", "host": 7}`, "line 1, column 59: not a valid fleet survey: host is a number, not a string"},
		{"status", strings.Replace(string(good), `"status":"pass"`, `"status":"great"`, 1), "line 21, column 52: not a valid fleet survey: vms[0] (vm-alpha): status \"great\" is not one of pass, skip"},
		{"no-report", strings.Replace(string(good), `"report":`, `"rapport":`, 1), "line 21, column 5: not a valid fleet survey: vms[0] (vm-alpha): a pass VM without a report or api_identity"},
		{"twice", strings.Replace(string(good), `"vm-charlie"`, `"vm-alpha"`, 1), "line 22, column 5: VM vm-alpha@hv-a is listed twice"},
		{"big", string(good) + strings.Repeat(" ", 1<<20), "larger than 1 MiB: not a fleet survey"},
	}
}

// TestMergeJSONCopiesReports: the merged JSON holds each report as its
// survey does, on its VM's one line, also from an indented survey; a
// report that is not UTF-8 is written as encoding/json read it. A
// report rewritten after the merge is refused.
func TestMergeJSONCopiesReports(t *testing.T) {
	dir := t.TempDir()
	rep := fleettest.RealisticReport(ident(strings.Repeat("a", 32), "52:54:00:00:00:01", "192.0.2.1"))
	p := writeSurvey(t, dir, "a.json", "hv-a", []VM{{Name: "vm1", Source: "libvirt", Status: Pass, Report: &rep},
		{Name: "vm2", Source: "libvirt", Status: Pass, Report: &rep}})
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(indented.Bytes(), []byte("with some words"), []byte("with some w\xffrds"), 1)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Merge([]string{p}, MergeOptions{HostName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteJSON(&out, r); err != nil {
		t.Fatal(err)
	}
	var got Result
	if !utf8.Valid(out.Bytes()) || json.Unmarshal(out.Bytes(), &got) != nil || len(got.VMs) != 2 || got.VMs[0].Report == nil || got.VMs[1].Report == nil {
		t.Fatalf("the merged JSON is not a survey of two VMs with their reports:\n%.400s", out.Bytes())
	}
	if msg := got.VMs[0].Report.Checks[0].Findings[0].Message; !strings.Contains(msg, "w\uFFFDrds") {
		t.Errorf("the first finding's message is %q", msg)
	}
	_, vms, _ := bytes.Cut(out.Bytes(), []byte(`"vms": [`))
	if n := bytes.Count(vms, []byte("\n")); n != 5 || bytes.Count(vms, []byte("\n    {\"name\":")) != 2 {
		t.Errorf("the VMs are not one line each:\n%s", vms)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(`"check0"`), []byte(`"check9"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(io.Discard, r); err == nil || !strings.Contains(err.Error(), "changed while it was merged") {
		t.Errorf("a report rewritten after the merge: %v", err)
	}
}

// TestReadBoundedFIFO: a FIFO in a survey's place is refused at once,
// not waited on for a writer that never comes.
func TestReadBoundedFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "host.json")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := ReadBounded(p, 1<<20, nil, "a fleet survey"); done <- err }()
	select {
	case err := <-done:
		if err == nil || err.Error() != p+": not a regular file" {
			t.Errorf("a FIFO: %v, want %q", err, p+": not a regular file")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadBounded blocked on a FIFO")
	}
}
