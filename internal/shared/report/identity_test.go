package report

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestIdentitySchemaRejects proves the identity's schema is not vacuous:
// a report with a malformed identity fails it.
func TestIdentitySchemaRejects(t *testing.T) {
	t.Parallel()
	schema := compileSchema(t)
	good := render(t, New(cases[0].results, meta), FormatJSON, Options{})
	idOf := func(m map[string]any) map[string]any { return m["identity"].(map[string]any) }
	first := func(m map[string]any, k string) map[string]any { return idOf(m)[k].([]any)[0].(map[string]any) }
	mutations := map[string]func(m map[string]any){
		"raw-looking hash":     func(m map[string]any) { idOf(m)["machine_id_hash"] = "0102030405060708090A0B0C0D0E0F10" },
		"unknown state":        func(m map[string]any) { idOf(m)["machine_id_state"] = "fine" },
		"md5 fingerprint":      func(m map[string]any) { first(m, "ssh_host_keys")["fingerprint"] = "MD5:12:34" },
		"upper-case duid":      func(m map[string]any) { first(m, "dhcp_client_ids")["value"] = "00:02:AB" },
		"duid without colons":  func(m map[string]any) { first(m, "dhcp_client_ids")["value"] = "0002ab" },
		"unknown dhcp kind":    func(m map[string]any) { first(m, "dhcp_client_ids")["kind"] = "iaid" },
		"binding without at":   func(m map[string]any) { delete(first(m, "mac_bindings"), "at") },
		"address without mask": func(m map[string]any) { first(m, "interfaces")["addresses"] = []any{"192.0.2.10"} },
		"identity not object":  func(m map[string]any) { m["identity"] = "vm1" },
	}
	for name, mut := range mutations {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		mut(m)
		b, _ := json.Marshal(m)
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := schema.Validate(inst); err == nil {
			t.Errorf("%s: schema accepted a broken identity", name)
		}
	}
}

// TestIdentitySchemasAgree: the report and the jsonl line define the
// identity twice (each schema file stands alone); the two must not drift.
func TestIdentitySchemasAgree(t *testing.T) {
	t.Parallel()
	defs := func(p string) map[string]any {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Defs map[string]any `json:"$defs"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m.Defs
	}
	r, l := defs("../../../schema/report-v1.schema.json"), defs("../../../schema/finding-line-v1.schema.json")
	for _, k := range []string{"identity"} { // hexbytes is a pattern written in place now
		if r[k] == nil || !reflect.DeepEqual(r[k], l[k]) {
			t.Errorf("$defs.%s differs between the report and the finding-line schema", k)
		}
	}
}

// TestIdentityOnEveryLine: each jsonl line carries the run's identity,
// and the text report leaves it out.
func TestIdentityOnEveryLine(t *testing.T) {
	t.Parallel()
	r := New(cases[2].results, meta)
	for i, l := range strings.Split(strings.TrimSpace(string(render(t, r, FormatJSONL, Options{}))), "\n") {
		var line FindingLine
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		if line.Identity == nil || !reflect.DeepEqual(*line.Identity, testIdentity) {
			t.Errorf("line %d: identity %+v", i+1, line.Identity)
		}
	}
	txt := string(render(t, r, FormatText, Options{Text: TextOptions{Verbose: true}}))
	if strings.Contains(txt, testIdentity.MachineIDHash) || strings.Contains(txt, testIdentity.InstanceID) {
		t.Errorf("the text report shows the identity:\n%s", txt)
	}
}
