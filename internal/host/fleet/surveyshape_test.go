package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/schema"
)

// deferrals are the shape's refusals of what the schema may allow,
// which checkSurvey hands to the schema: a known key given twice (the
// schema sees the last), an integer not in plain digits (1.0, 1e0, -0),
// nesting past the shape's bound. In a document with a key twice in an
// object, the shape may refuse the first's value, which the schema
// does not see.
var deferrals = []string{"given twice", "want an integer written in plain digits", "nested deeper than"}

// verdicts holds the shape to the schema on one document: what the
// shape takes the schema takes, and what the shape refuses the schema
// refuses too, unless the refusal is a deferral, which checkSurvey then
// resolves as the schema does.
type verdicts struct {
	t                          *testing.T
	sch                        surveySchema
	cases, taken, refused, def int
}

func (v *verdicts) check(name string, doc []byte) {
	v.t.Helper()
	v.cases++
	shapeErr := reportv1.Check(doc, surveyShape)
	schemaMsg := v.sch.check(doc)
	switch {
	case shapeErr == nil && schemaMsg == "":
		v.taken++
	case shapeErr == nil:
		v.t.Errorf("%s: the shape takes what the schema refuses: %s", name, schemaMsg)
	case schemaMsg != "":
		v.refused++
		if msg := checkSurvey(doc); msg != schemaMsg || strings.Contains(msg, "\n") {
			v.t.Errorf("%s: checkSurvey says %q, the schema %q", name, msg, schemaMsg)
		}
	case !deferred(shapeErr, doc):
		v.t.Errorf("%s: the shape refuses what the schema takes: %v", name, shapeErr)
	default:
		v.def++
		if msg := checkSurvey(doc); msg != "" {
			v.t.Errorf("%s: the shape defers, and checkSurvey refuses what the schema takes: %s", name, msg)
		}
	}
}

func deferred(err error, doc []byte) bool {
	for _, d := range deferrals {
		if strings.Contains(err.Error(), d) {
			return true
		}
	}
	return keyTwice(doc)
}

// keyTwice says whether an object of doc holds a key twice, as
// encoding/json decodes keys (escapes resolved, bytes that are not
// UTF-8 replaced).
func keyTwice(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	// Each open container: its keys so far, nil for an array.
	var stack []map[string]bool
	expectKey := func() bool { return len(stack) > 0 && stack[len(stack)-1] != nil }
	wantKey := true
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, map[string]bool{})
				wantKey = true
				continue
			case '[':
				stack = append(stack, nil)
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey() && wantKey {
				if stack[len(stack)-1][tok] {
					return true
				}
				stack[len(stack)-1][tok] = true
				wantKey = false
				continue
			}
		}
		// A value ended: in an object, a key follows.
		wantKey = true
	}
}

// fullSurvey is a survey that holds every key the fleet and report
// schemas name, at least once: a realistic report with a warned, waived
// finding and every identity item, an unknown VM, a VM known by its
// source's identity only, a collision, a source error and a merge's
// hosts.
func fullSurvey(t testing.TB) map[string]any {
	t.Helper()
	id := &guestid.Identity{MachineIDHash: strings.Repeat("ab", 16), MachineIDState: "valid",
		OtherMachineIDs: []guestid.MachineIDCopy{{Hash: strings.Repeat("cd", 16), Source: "/var/lib/dbus/machine-id"}},
		HostKeys:        []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:" + strings.Repeat("Ab+/", 10) + "xyz", Path: "/etc/ssh/ssh_host_ed25519_key"}},
		DHCPClients:     []guestid.DHCPClient{{Kind: "duid", Value: "00:04:aa:bb", Source: "/var/lib/dhcp/dhclient6.leases:3", Interface: "enp1s0"}},
		MACBindings:     []guestid.MACBinding{{MAC: "52:54:00:00:00:01", At: "/etc/netplan/50.yaml:4", Kind: "netplan match: macaddress"}},
		Hostname:        "web1", InstanceID: "i-1",
		Interfaces: []guestid.Interface{{Name: "enp1s0", MAC: "52:54:00:00:00:01", Addresses: []string{"192.0.2.1/24", "2001:db8::1/64"}}},
		Unread:     []string{"instance-id: permission denied"}}
	rep := fleettest.RealisticReport(id)
	r := Result{SchemaVersion: SchemaVersion, Tool: "guestcheck fleet", Version: "1.0.0", Host: "hv-a",
		StartedAt: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC),
		VMs: []VM{{Name: "web1", Source: "libvirt", Status: Pass, Report: &rep, AgentVersion: "9.2.0", Networks: map[string]string{"52:54:00:00:00:01": "default"}},
			{Name: "down", Source: "libvirt", Status: Unknown, Reason: "guest agent not responding"}}}
	r.finish()
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	doc := decodeAny(t, b.Bytes())
	vms := doc["vms"].([]any)
	web := vms[0].(map[string]any)
	if web["name"] != "web1" {
		vms[0], vms[1] = vms[1], vms[0]
		web = vms[0].(map[string]any)
	}
	web["host"] = "hv-a"
	web["shares"] = []any{"machine-id"}
	web["reason"] = "check0: ok"
	web["firmware"] = map[string]any{"uuid": "0d3c5f3e-0000-4000-8000-000000000001", "uuid_from": "spec", "serial": "s1"}
	web["agent_disabled_commands"] = []any{"guest-exec"}
	report := web["report"].(map[string]any)
	report["summary"].(map[string]any)["waived"] = json.Number("1")
	check := report["checks"].([]any)[0].(map[string]any)
	check["status"] = "warn"
	f := check["findings"].([]any)[0].(map[string]any)
	f["status"], f["remediation"], f["reference"] = "warn", "do the thing", "/usr/share/doc/guestcheck/checks/x.md"
	f["waived"] = map[string]any{"reason": "known", "expires": "2027-01-31"}
	apiID := decodeAny(t, mustJSON(t, id))
	vms = append(vms, map[string]any{"name": "kv1", "source": "kubevirt", "status": "pass", "duration_ms": json.Number("0"),
		"host": "node1", "api_identity": apiID})
	doc["vms"] = vms
	doc["collisions"] = []any{map[string]any{"item": "machine-id", "value": "abab", "members": []any{"web1@hv-a", "kv1@hv-a"}, "fix": "reseal the template"}}
	doc["source_errors"] = []any{map[string]any{"source": "proxmox", "error": "permission denied"}}
	doc["hosts"] = []any{map[string]any{"host": "hv-a", "file": "hv-a.json", "version": "1.0.0", "started_at": "2026-12-02T04:00:00Z", "status": "pass", "vms": json.Number("3")}}
	return doc
}

func decodeAny(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutants calls emit with the document root after each mutation of
// every value under v in place (v restored after each): every key
// deleted, a key added, the value replaced by one of each JSON type and
// by near-misses of its own. Of an array only the first item is walked:
// the others have its schema.
func mutants(v any, at string, root map[string]any, emit func(string, map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		v["x-extra"] = json.Number("1")
		emit(at+" +x-extra", root)
		delete(v, "x-extra")
		for _, k := range keys {
			old := v[k]
			delete(v, k)
			emit(at+"/"+k+" deleted", root)
			for i, nv := range variants(old) {
				v[k] = nv
				emit(fmt.Sprintf("%s/%s variant %d (%.40v)", at, k, i, nv), root)
			}
			v[k] = old
			mutants(old, at+"/"+k, root, emit)
		}
	case []any:
		if len(v) == 0 {
			return
		}
		old := v[0]
		for i, nv := range variants(old) {
			v[0] = nv
			emit(fmt.Sprintf("%s/0 variant %d (%.40v)", at, i, nv), root)
		}
		v[0] = old
		mutants(old, at+"/0", root, emit)
	}
}

// variants are the values that replace v: one of each JSON type, the
// enums' values, and near-misses of v.
func variants(v any) []any {
	out := []any{nil, true, json.Number("0"), json.Number("1"), json.Number("-1"), json.Number("1.5"), "", "x",
		"pass", "unknown", "warn", "skip", []any{}, map[string]any{}}
	switch v := v.(type) {
	case string:
		out = append(out, v+"0", v+":00", v+"/", strings.ToUpper(v), v+"\n", v+"é")
		if v != "" {
			out = append(out, v[:len(v)-1], "G"+v[1:], "-"+v, v+"-")
		}
	case json.Number:
		out = append(out, json.Number("2"), json.Number(string(v)+".0"), json.Number("1e400"))
	case []any:
		if len(v) > 0 {
			out = append(out, v[:1], append([]any{v[0]}, v...))
		}
	}
	return out
}

// TestSurveyShapeIsTheSchema holds the shapes to the schemas: the same
// verdict on the hand-made bad surveys of the merge and report tests,
// on every generated mutation of a survey that holds every key the
// schemas name, and on mutations of its text the tree cannot make.
func TestSurveyShapeIsTheSchema(t *testing.T) {
	t.Parallel()
	sch, err := compileSurveySchema()
	if err != nil {
		t.Fatal(err)
	}
	v := &verdicts{t: t, sch: sch}
	a, _ := twoHosts(t)
	good, _ := os.ReadFile(a)
	v.check("twoHosts", good)
	for _, c := range badSurveys(good) {
		v.check("badSurveys "+c.name, []byte(c.content))
	}
	doc := fullSurvey(t)
	base := mustJSON(t, doc)
	if err := reportv1.Check(base, surveyShape); err != nil || sch.check(base) != "" {
		t.Fatalf("the full survey: shape %v, schema %s", err, sch.check(base))
	}
	hand := v.cases
	mutants(doc, "", doc, func(name string, root map[string]any) { v.check(name, mustJSON(t, root)) })
	generated := v.cases - hand
	for _, tc := range textMutants(base) {
		v.check(tc.name, tc.doc)
	}
	t.Logf("%d cases: %d hand-made, %d generated from the tree, %d from the text; %d taken by both, %d refused by both, %d deferred to the schema",
		v.cases, hand, generated, v.cases-hand-generated, v.taken, v.refused, v.def)
	if generated < 2000 || v.taken < 100 || v.refused < 1000 || v.def < 5 {
		t.Errorf("too few cases of a kind to say much")
	}
}

type textCase struct {
	name string
	doc  []byte
}

// textMutants are mutations of a survey's text: duplicate keys,
// escapes, numbers the tree writes one way only, bytes that are not
// UTF-8, nesting, what follows the document, and the reports of
// reportv1's tests in a VM's place.
func textMutants(base []byte) []textCase {
	s := string(base)
	one := func(old, nu string) []byte { return []byte(strings.Replace(s, old, nu, 1)) }
	vm := `{"duration_ms":0,`
	cases := []textCase{
		{"dup status, bad first", one(vm, vm+`"status":"great",`)},
		{"dup status, bad last", one(`"status":"pass"`, `"status":"pass","status":"great"`)},
		{"dup name, empty first", one(vm, vm+`"name":"",`)},
		{"dup detail key, bad first", one(`"detail":{`, `"detail":{"path":7,`)},
		{"dup detail key, bad last", one(`"detail":{`, `"detail":{"path":"x","path":7,`)},
		{"dup networks key", one(`"networks":{`, `"networks":{"a":"b","a":"c",`)},
		{"dup waived key", one(`"reason":"known"`, `"reason":"","reason":"known"`)},
		{"escaped status", one(`"status":"pass"`, `"status":"p\u0061ss"`)},
		{"escaped bad status", one(`"status":"pass"`, `"status":"p\u00e1ss"`)},
		{"escaped key", one(`"status":"pass"`, `"st\u0061tus":"pass"`)},
		{"escaped key, bad value", one(`"status":"pass"`, `"st\u0061tus":"great"`)},
		{"escaped slash in kebab", one(`"code":"check0-finding0"`, `"code":"check0\/finding0"`)},
		{"escaped waived key", one(`"reason":"known"`, `"re\u0061son":"known"`)},
		{"unicode waived key", one(`"reason":"known"`, `"reason":"known","r\u00e9ason":"x"`)},
		{"not UTF-8 in a message", one(`"message":"`, "\"message\":\"\xff\xfe")},
		{"not UTF-8 in a code", one(`"code":"check0-finding0"`, "\"code\":\"check0-finding\xff\"")},
		{"control character", one(`"message":"`, "\"message\":\"\x01")},
		{"bad escape", one(`"message":"`, `"message":"\x`)},
		{"schema_version 1.0", one(`"schema_version":1`, `"schema_version":1.0`)},
		{"schema_version 1e0", one(`"schema_version":1`, `"schema_version":1e0`)},
		{"schema_version 10e-1", one(`"schema_version":1`, `"schema_version":10e-1`)},
		{"duration -0", one(`"duration_ms":0`, `"duration_ms":-0`)},
		{"duration 2.5e1", one(`"duration_ms":0`, `"duration_ms":2.5e1`)},
		{"duration 0.5", one(`"duration_ms":0`, `"duration_ms":0.5`)},
		{"duration 01", one(`"duration_ms":0`, `"duration_ms":01`)},
		{"waived 1.0", one(`"waived":1`, `"waived":1.0`)},
		{"deep unknown key", one(`{`, `{"x-deep":`+strings.Repeat("[", 300)+strings.Repeat("]", 300)+`,`)},
		{"trailing space", []byte(s + "\n  \t")},
		{"trailing value", []byte(s + " 1")},
		{"trailing brace", []byte(s + "}")},
		{"two documents", []byte(s + s)},
		{"leading space", []byte("\r\n " + s)},
		{"empty", nil},
		{"truncated", base[:len(base)-1]},
		{"leading comma", one(`"vms":[`, `"vms":[,`)},
		{"comma before brace", []byte(strings.TrimSuffix(s, "}") + ",}")},
		{"literal tru", one(`{`, `{"x":tru,`)},
		{"key not a string", one(`{`, `{1:2,`)},
		{"null", []byte("null")},
	}
	reports := []string{
		`{"schema_version":1,"tool":"guestcheck","status":"pass","checks":[{"id":"a","status":"warn","findings":[{"status":"warn","code":"x"}]}]}`,
		`{"schema_version":1,"tool":"goss"}`,
		`{"schema_version":2,"tool":"guestcheck"}`,
		`{"schema_version":1,"tool":"guestcheck","status":"ok"}`,
		`{"schema_version":1,"tool":"guestcheck","status":"pass","checks":[{"id":"a","status":7}]}`,
		`{"schema_version":1,"tool":"guestcheck","status":"pass","identity":{"ssh_host_keys":"k"}}`,
		`[1]`,
	}
	start := strings.Index(s, `"report":`) + len(`"report":`)
	end := start + reportEnd(base[start:])
	for i, r := range reports {
		cases = append(cases, textCase{fmt.Sprintf("reportv1 case %d", i), []byte(s[:start] + r + s[end:])})
	}
	return cases
}

// reportEnd is the length of the JSON value b starts with.
func reportEnd(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		panic(err)
	}
	return int(dec.InputOffset())
}

// FuzzSurveyShape: on any bytes, the shape never takes what the
// schema refuses, and refuses what the schema takes only as a deferral.
func FuzzSurveyShape(f *testing.F) {
	base := mustJSON(f, fullSurvey(f))
	f.Add(base)
	for _, tc := range textMutants(base) {
		f.Add(tc.doc)
	}
	sch, err := compileSurveySchema()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		shapeErr := reportv1.Check(doc, surveyShape)
		schemaMsg := sch.check(doc)
		switch {
		case shapeErr == nil && schemaMsg != "":
			t.Fatalf("the shape takes what the schema refuses: %s", schemaMsg)
		case shapeErr != nil && schemaMsg == "" && !deferred(shapeErr, doc):
			t.Fatalf("the shape refuses what the schema takes: %v", shapeErr)
		case shapeErr != nil && !errors.As(shapeErr, new(*reportv1.SchemaError)):
			t.Fatalf("not a SchemaError: %v", shapeErr)
		}
	})
}

// TestFullSurveyHoldsEverySchemaKey keeps fullSurvey whole as the
// schemas grow: every name under a "properties" of the fleet and report
// schemas is a key somewhere in it, so that a key added to a schema and
// not to the shape is mutated, and the differential test sees the two
// part.
func TestFullSurveyHoldsEverySchemaKey(t *testing.T) {
	have := map[string]bool{}
	var keys func(v any)
	keys = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				have[k] = true
				keys(e)
			}
		case []any:
			for _, e := range v {
				keys(e)
			}
		}
	}
	keys(fullSurvey(t))
	for _, n := range []string{"fleet-v1.schema.json", "report-v1.schema.json"} {
		b, err := schema.Files.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		var props func(v any, at string)
		props = func(v any, at string) {
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					if p, ok := e.(map[string]any); ok && k == "properties" {
						for name := range p {
							if !have[name] {
								t.Errorf("%s: %s/properties/%s is in no key of fullSurvey: add it there, and to the shape", n, at, name)
							}
						}
					}
					props(e, at+"/"+k)
				}
			case []any:
				for i, e := range v {
					props(e, fmt.Sprintf("%s/%d", at, i))
				}
			}
		}
		props(doc, "#")
	}
}
