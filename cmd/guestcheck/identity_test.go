package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/shared/report"
)

// imageMachineID is writeImageRoot's /etc/machine-id.
const imageMachineID = "4b2f0c1d9e8a4f6b8c7d6e5f4a3b2c1d"

// TestReportIdentity: a --root run carries the image's identity in JSON,
// in every jsonl line and in a JSON --output file, with the machine-id
// only as its hash: the raw ID appears in no format.
func TestReportIdentity(t *testing.T) {
	root := writeImageRoot(t, 0o644, false)
	out := filepath.Join(t.TempDir(), "report.json")
	base := []string{"--root", root, "--config", writeConfig(t, ""), "--only", "hostname,network-identity"}
	outputs := map[string]string{}
	for _, f := range []string{"json", "jsonl", "text", "tap", "junit", "prometheus", "nagios"} {
		var stdout, stderr bytes.Buffer
		args := append(append([]string(nil), base...), "--format", f)
		if f == "json" {
			args = append(args, "--output", "json:"+out)
		}
		run(args, &stdout, &stderr, checks.All)
		if stderr.Len() > 0 {
			t.Errorf("%s: stderr %s", f, stderr.String())
		}
		outputs[f] = stdout.String()
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	outputs["--output json"] = string(file)
	for f, s := range outputs {
		flat := strings.ToLower(strings.NewReplacer("-", "", ":", "", " ", "").Replace(s))
		if strings.Contains(flat, imageMachineID) {
			t.Errorf("%s: the raw machine-id is in the report", f)
		}
	}
	wantHash, _ := guestid.MachineIDHash(imageMachineID)
	var rep report.Report
	if err := json.Unmarshal([]byte(outputs["json"]), &rep); err != nil {
		t.Fatal(err)
	}
	id := rep.Identity
	if id == nil || id.MachineIDHash != wantHash || id.MachineIDState != "valid" || id.Hostname != "bad_host_" || id.Interfaces != nil {
		t.Fatalf("identity %+v, want hash %s, hostname bad_host_, no interfaces under --root", id, wantHash)
	}
	if !strings.Contains(string(file), `"machine_id_hash": "`+wantHash+`"`) {
		t.Error("the --output file has no identity")
	}
	lines := strings.Split(strings.TrimSpace(outputs["jsonl"]), "\n")
	for i, l := range lines {
		var fl report.FindingLine
		if err := json.Unmarshal([]byte(l), &fl); err != nil {
			t.Fatal(err)
		}
		if fl.Identity == nil || fl.Identity.MachineIDHash != wantHash {
			t.Errorf("jsonl line %d has no identity", i+1)
		}
	}
	if strings.Contains(outputs["text"], wantHash) {
		t.Error("the text report shows the identity")
	}
}

// TestReportIdentityNeverFails: an identity that cannot be read changes
// neither the checks nor the exit code; it is said in unread.
func TestReportIdentityNeverFails(t *testing.T) {
	good := writeImageRoot(t, 0o644, false)
	bad := writeImageRoot(t, 0o644, false)
	if err := os.Remove(filepath.Join(bad, "etc/machine-id")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(bad, "etc/machine-id"), 0o755); err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	var rep report.Report
	for name, root := range map[string]string{"good": good, "bad": bad} {
		var stdout, stderr bytes.Buffer
		codes[name] = run([]string{"--root", root, "--config", writeConfig(t, ""), "--only", "hostname,fstab", "--format", "json"}, &stdout, &stderr, checks.All)
		if name == "bad" {
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if codes["good"] != codes["bad"] {
		t.Errorf("exit code %d with an unreadable machine-id, %d without", codes["bad"], codes["good"])
	}
	if rep.Identity == nil || rep.Identity.MachineIDState != guestid.StateUnreadable || len(rep.Identity.Unread) == 0 {
		t.Errorf("identity %+v", rep.Identity)
	}
}

func TestStartIdentity(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	slow := startIdentity(func() guestid.Identity { <-block; return guestid.Identity{Hostname: "late"} }, 50*time.Millisecond)
	start := time.Now()
	id := slow()
	if time.Since(start) > 2*time.Second || id.Hostname != "" || len(id.Unread) != 1 || id.Unread[0] != "identity: not read within 50ms (check_timeout)" {
		t.Errorf("past its deadline: %+v", id)
	}
	bad := startIdentity(func() guestid.Identity { panic("boom") }, time.Minute)
	if id := bad(); len(id.Unread) != 1 || id.Unread[0] != "identity: reading it failed: boom" {
		t.Errorf("after a panic: %+v", id)
	}
	ok := startIdentity(func() guestid.Identity { return guestid.Identity{Hostname: "vm1"} }, time.Minute)
	if id := ok(); id.Hostname != "vm1" || id.Unread != nil {
		t.Errorf("in time: %+v", id)
	}
}

// TestLiveInterfaces reads the links of a network namespace the test
// made: its NICs with their MACs and global addresses, never loopback.
func TestLiveInterfaces(t *testing.T) {
	ns := nstest.New(t)
	ns.NIC(t, "eth0", "52:54:00:12:34:56", "192.0.2.10/24", "2001:db8::10/64")
	ns.NIC(t, "eth1", "52:54:00:12:34:57")
	ifs, err := liveInterfaces(ns.Handle)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]guestid.Interface{}
	for _, i := range ifs {
		got[i.Name] = i
	}
	if _, ok := got["lo"]; ok || len(got) != 2 {
		t.Errorf("interfaces %+v, want eth0 and eth1 only", ifs)
	}
	if e := got["eth0"]; e.MAC != "52:54:00:12:34:56" || strings.Join(e.Addresses, " ") != "192.0.2.10/24 2001:db8::10/64" {
		t.Errorf("eth0 %+v", e)
	}
	if e := got["eth1"]; e.MAC != "52:54:00:12:34:57" || e.Addresses != nil {
		t.Errorf("eth1 %+v", e)
	}
}
