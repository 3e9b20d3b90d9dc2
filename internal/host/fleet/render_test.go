package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sampleSurvey surveys six fake VMs: two clones sharing machine-id,
// host key and an address on one known network, a failing VM, one whose
// guestcheck could not judge a check (error), one with guest-exec
// filtered and one with no agent channel. Times are fixed so
// that the output can be held to goldens.
func sampleSurvey(t testing.TB) Result {
	t.Helper()
	clone := func(mac string) *guestid.Identity {
		return &guestid.Identity{MachineIDHash: "4f1d2c3b4a5968778695a4b3c2d1e0f9", Hostname: "tmpl",
			HostKeys:   []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"}},
			Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: mac, Addresses: []string{"192.0.2.10/24"}}}}
	}
	other := &guestid.Identity{MachineIDHash: "00112233445566778899aabbccddeeff", Hostname: "db \"1\"",
		Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: "52:54:00:00:00:03", Addresses: []string{"192.0.2.10/24"}}}}
	nets := map[string]string{"52:54:00:00:00:01": "default", "52:54:00:00:00:02": "default", "52:54:00:00:00:03": "isolated"}
	tg := func(name string, a *qgafake.Agent) Target {
		t := pipeTarget(name, a)
		t.Source, t.Networks = "libvirt", nets
		return t
	}
	targets := []Target{
		tg("web-1", &qgafake.Agent{Run: runs(booted(guestReport(t, runner.Pass, clone("52:54:00:00:00:01")), 1), 0)}),
		tg("web-2", &qgafake.Agent{Run: runs(booted(guestReport(t, runner.Pass, clone("52:54:00:00:00:02")), 2), 0)}),
		tg("db-1", &qgafake.Agent{Run: runs(booted(guestReport(t, runner.Fail, other), 3), 0)}),
		tg("app-1", &qgafake.Agent{Run: runs(guestReport(t, runner.Error, &guestid.Identity{MachineIDHash: "ffeeddccbbaa99887766554433221100", Hostname: "app-1"}), 0)}),
		tg("rhel-9", &qgafake.Agent{Disabled: []string{"guest-exec"}}),
		{Name: "win <&>", Source: "libvirt", Unreachable: "no guest agent channel (add <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel>)"},
	}
	r := Survey(context.Background(), targets, []SourceError{{Source: "proxmox", Error: "open /var/run/qemu-server: permission denied"}}, Options{VMTimeout: 5 * time.Second})
	r.Host, r.Version, r.StartedAt, r.DurationMS = "hv1", "1.0.0", time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC), 1234
	for i := range r.VMs {
		r.VMs[i].DurationMS = 100 * int64(i+1)
	}
	return r
}

// booted gives a guest report the boot ID 0f2c1f7e-3b0d-4e57-9c54-N.
func booted(rep []byte, n int) []byte {
	return bytes.Replace(rep, []byte(`"boot_id":""`), fmt.Appendf(nil, `"boot_id":"0f2c1f7e-3b0d-4e57-9c54-%012d"`, n), 1)
}

func render(t *testing.T, r Result, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r, format); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRenderGoldens pins the text, JSON, JUnit and Prometheus outputs.
func TestRenderGoldens(t *testing.T) {
	r := sampleSurvey(t)
	for f, ext := range map[string]string{FormatText: "txt", FormatJSON: "json", FormatJUnit: "junit.xml", FormatPrometheus: "prom"} {
		testenv.Golden(t, filepath.Join("testdata", "survey."+ext), string(render(t, r, f)), *update)
	}
	testenv.GeneratedBlock(t, "../../../docs/fleet.md", "fleet-table", "```\n"+string(render(t, r, FormatText))+"```\n", *update)
	if r.Status != Fail || ExitCode(r) != 1 {
		t.Errorf("status %s exit %d, want fail 1 (collisions)", r.Status, ExitCode(r))
	}
	var got []string
	for _, c := range r.Collisions {
		got = append(got, string(c.Item)+"="+c.Value+"="+strings.Join(c.Members, ","))
	}
	// db-1's 192.0.2.10 is on another network: no collision with it.
	want := "machine-id=4f1d2c3b4a5968778695a4b3c2d1e0f9=web-1,web-2 ssh-host-key=SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s=web-1,web-2 hostname=tmpl=web-1,web-2 address=192.0.2.10 (default)=web-1,web-2"
	if strings.Join(got, " ") != want {
		t.Errorf("collisions:\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
}

// TestAddressesOnlyOnKnownNetworks: an address is compared only between
// NICs on one known network.
func TestAddressesOnlyOnKnownNetworks(t *testing.T) {
	id := func(mac string) *GuestReport {
		return &GuestReport{Identity: &guestid.Identity{Interfaces: []guestid.Interface{{MAC: mac, Addresses: []string{"10.0.2.15/24"}}}}}
	}
	for _, tc := range []struct {
		name       string
		netA, netB map[string]string
		want       int
	}{
		{"same known network", map[string]string{"52:54:00:00:00:0a": "br0"}, map[string]string{"52:54:00:00:00:0b": "br0"}, 1},
		{"two networks", map[string]string{"52:54:00:00:00:0a": "br0"}, map[string]string{"52:54:00:00:00:0b": "br1"}, 0},
		{"both unknown", nil, nil, 0},
		{"one unknown", map[string]string{"52:54:00:00:00:0a": "br0"}, nil, 0},
	} {
		cs := collisions([]VM{{Name: "a", Report: id("52:54:00:00:00:0A"), Networks: tc.netA}, {Name: "b", Report: id("52:54:00:00:00:0b"), Networks: tc.netB}})
		if len(cs) != tc.want {
			t.Errorf("%s: %d collisions %+v, want %d", tc.name, len(cs), cs, tc.want)
		}
	}
}

// compileFleetSchema compiles schema/fleet-v1.schema.json with the
// report schema it refers to.
func compileFleetSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return testenv.Schema(t, "../../../schema", "fleet-v1.schema.json")
}

// TestJSONSchema validates the JSON output, and proves the schema is
// not vacuous: broken documents fail it.
func TestJSONSchema(t *testing.T) {
	s := compileFleetSchema(t)
	good := render(t, sampleSurvey(t), FormatJSON)
	vm := func(d map[string]any, i int) map[string]any { return d["vms"].([]any)[i].(map[string]any) }
	for name, mutate := range map[string]func(d map[string]any){
		"good":                func(map[string]any) {},
		"bad status":          func(d map[string]any) { vm(d, 0)["status"] = "great" },
		"unknown with report": func(d map[string]any) { vm(d, 0)["status"] = "unknown" },
		"pass without report": func(d map[string]any) { vm(d, 4)["status"] = "pass" },
		"bad report":          func(d map[string]any) { vm(d, 0)["report"].(map[string]any)["tool"] = "other" },
		"collision of one":    func(d map[string]any) { d["collisions"].([]any)[0].(map[string]any)["members"] = []any{"web-1"} },
		"no schema version":   func(d map[string]any) { delete(d, "schema_version") },
		"unknown shared item": func(d map[string]any) { d["collisions"].([]any)[0].(map[string]any)["item"] = "colour" },
		"missing collisions":  func(d map[string]any) { delete(d, "collisions") },
	} {
		var d map[string]any
		if err := json.Unmarshal(good, &d); err != nil {
			t.Fatal(err)
		}
		mutate(d)
		b, _ := json.Marshal(d)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Validate(inst); (name == "good") != (err == nil) {
			t.Errorf("%s: valid=%v, got %v", name, name == "good", err)
		}
	}
	empty := render(t, Result{SchemaVersion: 1, Tool: "guestcheck fleet", Version: "1", Status: Pass}, FormatJSON)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(empty))
	if err != nil {
		t.Fatalf("%v: %s", err, empty)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("a survey of no VMs: %v", err)
	}
}

// TestJUnitSchemas validates the JUnit output with xmllint against both
// stored XSDs.
func TestJUnitSchemas(t *testing.T) {
	xmllint := testenv.Tool(t, "xmllint", "libxml2-utils")
	p := filepath.Join(t.TempDir(), "fleet.xml")
	if err := os.WriteFile(p, render(t, sampleSurvey(t), FormatJUnit), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, xsd := range []string{"../../../schema/junit/junit-10.xsd", "../../../schema/junit/JUnit.xsd"} {
		if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, p).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", filepath.Base(xsd), err, out)
		}
	}
}

// TestPromtool lints the Prometheus output with promtool check metrics.
func TestPromtool(t *testing.T) {
	promtool := testenv.Tool(t, "promtool", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(render(t, sampleSurvey(t), FormatPrometheus))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestGuestTextIsHostile: whatever a guest puts in its report's strings
// reaches the table as one line.
func TestGuestTextIsHostile(t *testing.T) {
	rep := guestReport(t, runner.Fail, nil)
	rep = bytes.Replace(rep, []byte(`"summary":"hostname is fail"`), []byte(`"summary":"line1\nline2\u001b[31mred\r"`), 1)
	r := Survey(context.Background(), []Target{pipeTarget("x", &qgafake.Agent{Run: runs(rep, 0)})}, nil, Options{VMTimeout: 5 * time.Second})
	text := string(render(t, r, FormatText))
	if strings.Contains(text, "\x1b") || strings.Contains(text, "\r") || !strings.Contains(text, "hostname: line1 line2\uFFFD[31mred") {
		t.Errorf("table:\n%q", text)
	}
	if r.VMs[0].Status != Fail {
		t.Errorf("status %s", r.VMs[0].Status)
	}
	// In JUnit too the text is on one line, the escape character shown
	// as U+FFFD: a CI page or a terminal shows what the guest wrote, not
	// what it meant to do.
	var doc junitxml.Suites
	if err := xml.Unmarshal(render(t, r, FormatJUnit), &doc); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			msgs = append(msgs, c.Failure.Message)
		}
	}
	if want := "line1 line2\uFFFD[31mred "; len(msgs) != 1 || msgs[0] != want {
		t.Errorf("JUnit failure messages %q, want [%q]", msgs, want)
	}
}

// TestSharedIdentityHeading: the heading counts values, as the summary
// line does, so that an entry holding three host keys adds up.
func TestSharedIdentityHeading(t *testing.T) {
	m := []string{"a", "b"}
	r := Result{Collisions: []guestid.Collision{
		{Item: guestid.ItemMachineID, Value: "0123456789abcdef0123456789abcdef", Members: m, Fix: "f1"},
		{Item: guestid.ItemHostKey, Value: "SHA256:one", Members: m, Fix: "f2"},
		{Item: guestid.ItemHostKey, Value: "SHA256:two", Members: m, Fix: "f2"},
		{Item: guestid.ItemHostKey, Value: "SHA256:three", Members: m, Fix: "f2"},
	}, Summary: Summary{Collisions: 4}}
	text := string(render(t, r, FormatText))
	if !strings.Contains(text, "\nShared identity (4 values):\n  machine-id hash 01234567...: a, b\n    fix: f1\n  3 ssh-host-keys SHA256:one, SHA256:two, SHA256:three: a, b\n    fix: f2\n") {
		t.Errorf("text:\n%s", text)
	}
}
