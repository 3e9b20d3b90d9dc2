package networkidentity

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

const templateID = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"

func templateEvidence(t *testing.T, machineID string, record []byte) identity.CloneEvidence {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc/machine-id"), []byte(machineID), 0o444); err != nil {
		t.Fatal(err)
	}
	if record != nil {
		p := filepath.Join(dir, sealrecord.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, record, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return identity.ReadCloneEvidence(r, false)
}

func TestJudgeTemplateMachineID(t *testing.T) {
	rec := sealrecord.Record{SealedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), SealprepVersion: "v9.9",
		MachineIDHash: sealrecord.HashMachineID(templateID)}
	kept := rec.Marshal()
	rec.MachineIDCleared = true
	cleared := rec.Marshal()
	// A record an older sealprep wrote: "schema": 1, a plain SHA-256.
	v1 := []byte(`{"schema": 1, "sealed_at": "2026-11-02T09:00:00Z", "sealprep_version": "v0.9", "ssh_host_keys": [],
"ssh_host_keys_removed": true, "machine_id_sha256": "` + sealrecord.LegacyHashMachineID(templateID) + `", "machine_id_cleared": false}`)
	for _, tc := range []struct {
		name, id string
		record   []byte
		code     string
		status   runner.Status
		subs     []string
	}{
		{"kept", templateID + "\n", kept, CodeIDMachineIDTemplate.ID, runner.Fail, []string{"template's machine ID", "sealed at 2026-12-01T09:30:00Z by sealprep v9.9 without its machine-id operation)"}},
		{"back", strings.ToUpper(templateID) + "\n", cleared, CodeIDMachineIDTemplate.ID, runner.Fail, []string{"by sealprep v9.9, whose machine-id operation cleared it; it was put back since)"}},
		{"version-1", templateID + "\n", v1, CodeIDMachineIDTemplate.ID, runner.Fail, []string{"sealed at 2026-11-02T09:00:00Z by sealprep v0.9 without its machine-id operation)"}},
		{"own", "0123456789abcdef0123456789abcdef\n", kept, "", "", nil},
		{"own-version-1", "0123456789abcdef0123456789abcdef\n", v1, "", "", nil},
		{"unset", "", kept, "", "", nil},
		{"no-record", templateID + "\n", nil, "", "", nil},
		{"bad-record", templateID + "\n", []byte("{\n\"schema\": 1,\n\"x\": 1}"), CodeIDTemplateRecordBad.ID, runner.Warn, []string{sealrecord.Path, "unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := JudgeTemplateMachineID(templateEvidence(t, tc.id, tc.record))
			if tc.code == "" {
				if len(out) != 0 {
					t.Fatalf("findings %+v", out)
				}
				return
			}
			assertConventions(t, out, Codes)
			if len(out) != 1 || out[0].Code != tc.code || out[0].Status != tc.status || out[0].Remediation == "" {
				t.Fatalf("findings %+v", out)
			}
			for _, s := range tc.subs {
				if !strings.Contains(out[0].Message, s) {
					t.Errorf("message %q lacks %q", out[0].Message, s)
				}
			}
			if strings.Contains(strings.ToLower(out[0].Message+out[0].Detail["machine_id_hash"]), templateID) {
				t.Error("the finding carries the raw ID")
			}
			if h := out[0].Detail["machine_id_hash"]; tc.code == CodeIDMachineIDTemplate.ID && h != sealrecord.HashMachineID(templateID) {
				t.Errorf("detail machine_id_hash %q, want the report's hash of the ID", h)
			}
		})
	}
}

// A MAC binding or DHCP state the template keeps by choice (the record
// says --force passed net-mac-pins' refusal at that file, or --ops
// dropped dhcp-leases) is a warning in the record's own words, the line
// sealprep verify warns with; without the choice, or for another file,
// it still fails.
func TestTemplateKeptByChoiceWarns(t *testing.T) {
	mac, _ := net.ParseMAC("52:54:00:ab:cd:ef")
	rec := &sealrecord.Record{SealedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), SealprepVersion: "v9.9",
		Kept:   []string{"dhcp-leases"},
		Forced: []sealrecord.Forced{sealrecord.NewForced("net-mac-pins", "/etc/netplan/60-admin.yaml", "matches the NIC by MAC")}}
	st := identity.TemplateState{Is: true, Why: "sealed", Record: rec}
	bs := []MACBinding{
		{MAC: mac, At: "/etc/netplan/60-admin.yaml:6", Kind: "netplan match: macaddress", Name: "lan"},
		{MAC: mac, At: "/etc/systemd/network/10-lan.network:2", Kind: "networkd [Match] MACAddress="},
	}
	fs := JudgeTemplateMACBindings(bs, st)
	assertConventions(t, fs, Codes)
	forced, _ := rec.KeptItem("net-mac-pins", true)
	if len(fs) != 2 || fs[0].Status != runner.Warn || fs[0].Message != forced.Message || fs[1].Status != runner.Fail {
		t.Errorf("MAC bindings: %+v", fs)
	}
	fs = JudgeTemplateMACBindings(bs, identity.TemplateState{Is: true, Why: "sealed", Record: &sealrecord.Record{}})
	if len(fs) != 2 || fs[0].Status != runner.Fail || fs[1].Status != runner.Fail {
		t.Errorf("MAC bindings without a choice: %+v", fs)
	}
	dropped, _ := rec.KeptItem("dhcp-leases", false)
	ev := identity.CloneEvidence{State: st, DHCPState: []string{"/etc/dhcpcd.duid"}}
	if fs := JudgeTemplateDHCPState(ev); len(fs) != 1 || fs[0].Status != runner.Warn || fs[0].Message != dropped.Message {
		t.Errorf("DHCP state kept by choice: %+v", fs)
	}
	ev.State.Record = nil
	if fs := JudgeTemplateDHCPState(ev); len(fs) != 1 || fs[0].Status != runner.Fail {
		t.Errorf("DHCP state: %+v", fs)
	} else if assertConventions(t, fs, Codes); !strings.Contains(fs[0].Remediation, "/etc/dhcpcd.duid") {
		t.Errorf("DHCP state: %+v", fs)
	}
}

// TestTemplateLeftovers: each catalogue item a template holds that no
// other finding judges is one finding naming the item and what clones
// share; the item's operation dropped by choice makes it a warning in
// the record's words, only for that item.
func TestTemplateLeftovers(t *testing.T) {
	seed := catalogue.Lookup(catalogue.RandomSeed)
	key := catalogue.Lookup(catalogue.NMSecretKey)
	rec := &sealrecord.Record{SealedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), SealprepVersion: "v9.9", Kept: []string{seed.Op}}
	ev := identity.CloneEvidence{State: identity.TemplateState{Is: true, Why: "sealed", Record: rec}, Leftovers: []catalogue.Found{
		{Item: seed.Name, Path: seed.Files()[0]}, {Item: seed.Name, Path: seed.Files()[1]}, {Item: key.Name, Path: key.Files()[0]},
	}}
	fs := JudgeTemplateLeftovers(ev)
	assertConventions(t, fs, Codes)
	kept, _ := rec.KeptItem(seed.Op, false)
	if len(fs) != 2 || fs[0].Status != runner.Warn || fs[0].Message != kept.Message || fs[0].Detail["item"] != seed.Name ||
		fs[0].Detail["left"] != seed.Files()[0]+"\n"+seed.Files()[1] {
		t.Errorf("random seed kept by choice: %+v", fs)
	}
	if len(fs) == 2 && (fs[1].Status != runner.Fail || !strings.Contains(fs[1].Message, key.Shared) || !strings.Contains(fs[1].Remediation, key.Op)) {
		t.Errorf("secret_key: %+v", fs[1])
	}
	ev.State.Is = false
	if fs := JudgeTemplateLeftovers(ev); len(fs) != 0 {
		t.Errorf("off a template: %+v", fs)
	}
}
