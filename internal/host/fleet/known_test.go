package fleet

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// knownSurvey is three VMs a cluster's API describes: two sharing a
// firmware UUID on different hosts, and one sharing nothing.
func knownSurvey(t *testing.T) Result {
	t.Helper()
	k := func(uuid, host string) *Known {
		return &Known{Identity: guestid.Identity{Hostname: host}, Firmware: guestid.Firmware{UUID: uuid}, State: "running", AgentDisabled: []string{"guest-exec"}}
	}
	ts := []Target{
		{Name: "prod/a", Source: "kubevirt", Host: "node-1", Known: k("0d5a9f3e-1c2b-4a6d-8e7f-9a0b1c2d3e4f", "a")},
		{Name: "prod/b", Source: "kubevirt", Host: "node-2", Known: k("0d5a9f3e-1c2b-4a6d-8e7f-9a0b1c2d3e4f", "b")},
		{Name: "prod/c", Source: "kubevirt", Known: k("1d5a9f3e-1c2b-4a6d-8e7f-9a0b1c2d3e4f", "c")},
	}
	return Survey(context.Background(), ts, nil, Options{})
}

// TestKnownTargets: VMs judged on their source's API fail only on what
// they share, skip otherwise, and every output names their host.
func TestKnownTargets(t *testing.T) {
	r := knownSurvey(t)
	if r.Status != Fail || r.Summary.Fail != 2 || r.Summary.Skip != 1 || len(r.Collisions) != 1 || r.Collisions[0].Item != guestid.ItemFirmwareUUID {
		t.Fatalf("status %s summary %+v collisions %+v", r.Status, r.Summary, r.Collisions)
	}
	text := string(render(t, r, FormatText))
	if !strings.HasPrefix(text, "VM      HOST    SOURCE") || !strings.Contains(text, "prod/c  -       kubevirt  skip") {
		t.Errorf("text:\n%s", text)
	}
	prom := string(render(t, r, FormatPrometheus))
	if !strings.Contains(prom, `guestcheck_fleet_vm_info{domain="prod/a",source="kubevirt",agent_version="",host="node-1"} 1`) ||
		!strings.Contains(prom, `guestcheck_fleet_collisions{item="firmware-uuid"} 1`) {
		t.Errorf("prometheus:\n%s", prom)
	}
	junit := string(render(t, r, FormatJUnit))
	if !strings.Contains(junit, `<property name="host" value="node-2">`) || !strings.Contains(junit, `<skipped message="`+APIOnly+`">`) {
		t.Errorf("junit:\n%s", junit)
	}
	if msg := testenv.Validate(compileFleetSchema(t), render(t, r, FormatJSON)); msg != "" {
		t.Errorf("JSON: %s", msg)
	}
	if xmllint, ok := testenv.Look("xmllint"); ok {
		p := filepath.Join(t.TempDir(), "fleet.xml")
		os.WriteFile(p, []byte(junit), 0o644)
		if out, err := exec.Command(xmllint, "--noout", "--schema", "../../../schema/junit/JUnit.xsd", p).CombinedOutput(); err != nil {
			t.Errorf("JUnit.xsd: %v\n%s", err, out)
		}
	}
	if promtool, ok := testenv.Look("promtool"); ok {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = bytes.NewReader([]byte(prom))
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("promtool: %v\n%s", err, out)
		}
	}
}
