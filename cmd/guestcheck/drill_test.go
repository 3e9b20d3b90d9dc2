package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/host/drill"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestMain lets freeze-drill's guard, which re-executes this binary
// (/proc/self/exe), run as guestcheck's main does.
func TestMain(m *testing.M) {
	if drill.IsGuard() {
		os.Exit(drill.RunGuard())
	}
	os.Exit(m.Run())
}

// TestFreezeDrillCommand drills a fake agent on a socket through the
// command line, and a Proxmox VMID that does not exist: the named VM is
// frozen and thawed, the missing one reported, nothing else touched.
func TestFreezeDrillCommand(t *testing.T) {
	g := &qgafake.Guest{FS: []qgafake.FS{{Name: "vda", Mountpoint: "/", Type: "ext4"}}, OSID: "debian"}
	other := &qgafake.Guest{FS: g.FS}
	dir := t.TempDir()
	for name, gu := range map[string]*qgafake.Guest{"101": g, "102": other} {
		l, err := (&qgafake.Agent{Guest: gu}).Listen(filepath.Join(dir, name+".qga"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}
	old := fleet.ProxmoxDir
	fleet.ProxmoxDir = dir
	defer func() { fleet.ProxmoxDir = old }()
	out := filepath.Join(t.TempDir(), "drill.prom")
	var stdout, stderr bytes.Buffer
	code := run([]string{"freeze-drill", "--proxmox", "--name", "101", "--name", "103", "--deadline", "5s", "--format", "json", "--output", "prometheus:" + out}, &stdout, &stderr, checks.All)
	if code != 1 || stderr.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
	if msg := testenv.Validate(testenv.Schema(t, "../../schema", "freeze-drill-v1.schema.json"), stdout.Bytes()); msg != "" {
		t.Errorf("JSON output against schema/freeze-drill-v1.schema.json: %s", msg)
	}
	var r drill.Result
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.VMs) != 1 || r.VMs[0].Name != "101" || r.VMs[0].Status != drill.Pass || r.VMs[0].FrozenCount != 1 || r.VMs[0].ThawedBy != "drill" {
		t.Errorf("%+v", r.VMs)
	}
	if len(r.SourceErrors) != 1 || r.SourceErrors[0].Source != "103" || r.Status != drill.Unknown {
		t.Errorf("source errors %+v, status %s", r.SourceErrors, r.Status)
	}
	if g.Frozen() || g.Thaws() != 1 || other.Thaws() != 0 || other.Frozen() {
		t.Errorf("101: frozen %v, %d thaws; 102, not named: %d thaws", g.Frozen(), g.Thaws(), other.Thaws())
	}
	prom, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(prom), `guestcheck_freeze_drill_status{vm="101",source="proxmox",status="pass"} 1`) {
		t.Errorf("--output prometheus: %v\n%s", err, prom)
	}
}
