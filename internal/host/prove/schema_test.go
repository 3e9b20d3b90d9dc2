package prove

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/schemagen"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestSchemaIsTheTypes regenerates schema/prove-v1.schema.json from the
// report's Go types, their tags and ReportTypes, and compares it with
// the committed file (go test -update rewrites it, with the goldens):
// the types are the one definition of the report, the file its
// published form.
func TestSchemaIsTheTypes(t *testing.T) {
	schemagen.Compare(t, schemagen.Doc{File: "prove-v1.schema.json", Root: reflect.TypeFor[Report](), Types: ReportTypes(),
		Title: "sealprep prove report, schema version 1",
		Desc:  "Output of sealprep prove --format json (and --json FILE): whether throwaway clones of a template came up healthy and distinct. Changes within schema_version 1 are additive: consumers must ignore keys they do not know."}, *update)
}

// TestJSONSchema holds prove's JSON, the goldens' reports and the real
// ones TestVM/prove captured (testdata/captured, GUESTCHECK_VM_CAPTURE),
// to schema/prove-v1.schema.json and to the reader's check
// (reportv1.CheckJSON with ReportTypes; testdata/captured/prove-regen-keys.json
// is a real --reboot --boot-budget run of a template whose per-boot unit
// regenerates host keys), and proves neither is vacuous: broken
// documents fail both.
func TestJSONSchema(t *testing.T) {
	s := testenv.Schema(t, "../../../schema", "prove-v1.schema.json")
	types := ReportTypes()
	docs := map[string][]byte{}
	for name, r := range map[string]Report{"good": goodReport(), "bad": badReport(), "kept": keptReport(), "baseline": baselineReport(), "reboot": rebootReport(), "copy": copyReport()} {
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		docs[name] = b.Bytes()
	}
	captured, _ := filepath.Glob("testdata/captured/*.json")
	if len(captured) < 5 {
		t.Fatalf("%d captured reports in testdata/captured, want the five of TestVM/prove", len(captured))
	}
	for _, p := range captured {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = b
	}
	for name, b := range docs {
		if msg := testenv.Validate(s, b); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
		if err := reportv1.CheckJSON(b, reflect.TypeFor[Report](), types); err != nil {
			t.Errorf("%s: CheckJSON: %v", name, err)
		}
	}
	clone := func(d map[string]any) map[string]any { return d["clones"].([]any)[0].(map[string]any) }
	// --reboot's second boot and --boot-budget's times, on the reboot
	// report (clone-2 changed across its reboot).
	reboot := func(d map[string]any, i int) map[string]any {
		return d["clones"].([]any)[i].(map[string]any)["reboot"].(map[string]any)
	}
	for name, mutate := range map[string]func(d map[string]any){
		"unknown change":       func(d map[string]any) { reboot(d, 1)["changed"].([]any)[0].(map[string]any)["item"] = "colour" },
		"no changes array":     func(d map[string]any) { delete(reboot(d, 1), "changed") },
		"bad reboot boot":      func(d map[string]any) { reboot(d, 1)["boot"] = "maybe" },
		"boot time without ms": func(d map[string]any) { delete(reboot(d, 0)["boot_time"].(map[string]any), "to_verdict_ms") },
		"bad failure step":     func(d map[string]any) { d["failures"].([]any)[0].(map[string]any)["step"] = "restore" },
	} {
		var d map[string]any
		if err := json.Unmarshal(docs["reboot"], &d); err != nil {
			t.Fatal(err)
		}
		mutate(d)
		b, _ := json.Marshal(d)
		if testenv.Validate(s, b) == "" {
			t.Errorf("%s: the schema accepts it", name)
		}
	}
	// A --copy report's copies.
	cp := func(d map[string]any) map[string]any { return d["copies"].([]any)[0].(map[string]any) }
	for name, mutate := range map[string]func(d map[string]any){
		"unknown platform":    func(d map[string]any) { cp(d)["platform"] = "vmware-clone" },
		"copy named oddly":    func(d map[string]any) { cp(d)["copy"].(map[string]any)["name"] = "twin-1" },
		"shared unknown item": func(d map[string]any) { cp(d)["shared"].([]any)[0].(map[string]any)["item"] = "colour" },
		"shared empty value":  func(d map[string]any) { cp(d)["shared"].([]any)[0].(map[string]any)["value"] = "" },
		"network without up":  func(d map[string]any) { delete(cp(d)["network"].(map[string]any), "up") },
		"network extra key":   func(d map[string]any) { cp(d)["network"].(map[string]any)["raw_mac"] = "x" },
	} {
		rejected(t, s, types, docs["copy"], name, mutate)
	}
	for name, mutate := range map[string]func(d map[string]any){
		"no schema version": func(d map[string]any) { delete(d, "schema_version") },
		"another tool":      func(d map[string]any) { d["tool"] = "guestcheck" },
		"no clones":         func(d map[string]any) { d["clones"] = []any{} },
		"bad boot":          func(d map[string]any) { clone(d)["boot"] = "maybe" },
		"bad check status":  func(d map[string]any) { clone(d)["checks"].([]any)[0].(map[string]any)["status"] = "ok" },
		"collision of one":  func(d map[string]any) { d["collisions"].([]any)[0].(map[string]any)["members"] = []any{"clone-1"} },
		"unknown item":      func(d map[string]any) { d["items"].([]any)[0].(map[string]any)["item"] = "colour" },
		"bad item status":   func(d map[string]any) { d["items"].([]any)[0].(map[string]any)["status"] = "fine" },
		"raw machine-id length": func(d map[string]any) {
			clone(d)["identity"].(map[string]any)["machine_id_hash"] = strings.Repeat("a", 64)
		},
		"missing timings":  func(d map[string]any) { delete(clone(d), "timings") },
		"not a clone name": func(d map[string]any) { clone(d)["name"] = "vm-1" },
		"short mac":        func(d map[string]any) { clone(d)["mac"] = "52:54:00:12:34" },
		"unknown count":    func(d map[string]any) { clone(d)["verdict"].(map[string]any)["counts"].(map[string]any)["maybe"] = 1 },
		"negative count":   func(d map[string]any) { clone(d)["verdict"].(map[string]any)["counts"].(map[string]any)["fail"] = -1 },
		"failure of a firmware item": func(d map[string]any) {
			d["failures"].([]any)[0].(map[string]any)["item"] = "firmware-uuid"
		},
		"sealed at no time": func(d map[string]any) {
			tm := d["template"].(map[string]any)
			tm["template_record"], tm["sealed_at"] = true, "yesterday"
		},
	} {
		rejected(t, s, types, docs["bad"], name, mutate)
	}
}

// rejected mutates the JSON document doc and fails unless both the
// schema and CheckJSON refuse the result.
func rejected(t *testing.T, s *jsonschema.Schema, types reportv1.Types, doc []byte, name string, mutate func(map[string]any)) {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	mutate(d)
	b, _ := json.Marshal(d)
	if testenv.Validate(s, b) == "" {
		t.Errorf("%s: the schema accepts it", name)
	}
	if reportv1.CheckJSON(b, reflect.TypeFor[Report](), types) == nil {
		t.Errorf("%s: CheckJSON accepts it", name)
	}
}
