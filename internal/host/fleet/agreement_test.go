package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// The documented gaps: where the JSON Schema validator and the Go
// readers (reportv1.Decode, reportv1.CheckJSON of a finding line,
// Merge, readProve) may part, always with the schema accepting and the reader
// refusing. Each is said in the schemas' descriptions too (reportv1.Doc).
//
//   - gapDecimal: an integer written as 1.0 or 1e2 is an integer to
//     JSON Schema; encoding/json refuses it for an int, and so does
//     CheckJSON.
//   - gapDate: an impossible time (30 February, 25:00) matches the
//     schema's date-time pattern (formats are not asserted); time.Time
//     refuses it.
//   - gapRepeated: a key given twice is its last value to the schema
//     validator and to encoding/json; CheckJSON refuses it, so that no
//     reader sees a value that was not checked.
//   - gapCase: a key that is a field's name in other case ("Status") is
//     an unknown key to the schema, but encoding/json reads it into the
//     field; CheckJSON refuses it for the same reason.
const (
	gapNone = iota
	gapDecimal
	gapDate
	gapRepeated
	gapCase
)

var gapNames = []string{"", "integer as decimal", "impossible date", "repeated key", "key in other case"}

// TestSchemaAgreesWithReaders feeds documents guestcheck writes, and
// every systematic mutation of them (each key dropped, null, of the
// wrong type, repeated or in other case; each string, number and array
// replaced by values that break or keep the rules; a key added), to
// the schema validator and to the Go reader of their kind: both accept
// or both refuse, but for the documented gaps.
func TestSchemaAgreesWithReaders(t *testing.T) {
	dir := t.TempDir()
	kinds := []struct {
		schema string
		docs   [][]byte
		read   func([]byte) error
		// skip are paths (a regexp) not mutated: a survey's reports are
		// the report kind's documents, mutated there.
		skip *regexp.Regexp
	}{
		{"report-v1.schema.json", reportDocs(t), func(b []byte) error { _, err := reportv1.Decode(b); return err }, nil},
		{"finding-line-v1.schema.json", lineDocs(t), func(b []byte) error {
			return reportv1.CheckJSON(b, reportv1.Type[reportv1.FindingLine](), reportv1.FindingLineTypes)
		}, nil},
		{"fleet-v1.schema.json", surveyDocs(t), func(b []byte) error { return mergeOne(dir, b) }, regexp.MustCompile(`^/vms/\d+/report/`)},
		// Prove's identities are the report kind's, mutated there.
		{"prove-v1.schema.json", proveDocs(t), readProve, regexp.MustCompile(`^/(clones/\d+|template)/identity/`)},
	}
	for _, k := range kinds {
		sch := testenv.Schema(t, filepath.Join("..", "..", "..", "schema"), k.schema)
		n, refused, gaps := 0, 0, map[int]int{}
		for di, doc := range k.docs {
			if msg := testenv.Validate(sch, doc); msg != "" {
				t.Fatalf("%s: document %d is not valid: %s", k.schema, di, msg)
			}
			if err := k.read(doc); err != nil {
				t.Fatalf("%s: document %d does not read: %v", k.schema, di, err)
			}
			for _, m := range mutations(t, doc, k.skip) {
				n++
				schemaOK := testenv.Validate(sch, m.doc) == ""
				err := k.read(m.doc)
				switch {
				case !schemaOK && err != nil:
					refused++
				case schemaOK == (err == nil):
				case m.gap != gapNone && schemaOK:
					gaps[m.gap]++
				default:
					t.Errorf("%s: document %d, %s: the schema says valid=%v, the reader %v\n%s", k.schema, di, m.what, schemaOK, err, bounded(m.doc))
				}
				if err != nil && (strings.Contains(err.Error(), "\n") || len(err.Error()) > 400) {
					t.Errorf("%s: %s: the error is not one bounded line: %q", k.schema, m.what, err)
				}
			}
		}
		t.Logf("%s: %d documents, %d mutations, %d refused by both; parted on documented gaps: %s", k.schema, len(k.docs), n, refused, gapCounts(gaps))
		if refused < n/4 {
			t.Errorf("%s: only %d of %d mutations refused: the mutations miss the rules", k.schema, refused, n)
		}
	}
}

func gapCounts(gaps map[int]int) string {
	var parts []string
	for g, n := range gaps {
		parts = append(parts, fmt.Sprintf("%s %d", gapNames[g], n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

func bounded(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

// reportDocs are the report package's JSON goldens and a report with
// every identity item.
func reportDocs(t *testing.T) [][]byte {
	docs := goldenFiles(t, "*.json")
	rep := fleettest.RealisticReport(fullIdentity())
	rep.Checks = rep.Checks[:2]
	rep.Checks[1].Findings[0].Status, rep.Checks[1].Findings[0].Remediation = "warn", "do it"
	rep.Checks[1].Findings[1].Waived = &reportv1.Waived{Reason: "known", Expires: "2027-01-31"}
	rep.Summary.Waived = 1
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return append(docs, b)
}

// proveDocs are sealprep prove's JSON goldens and the real reports the
// VM suite captured.
func proveDocs(t *testing.T) [][]byte {
	var docs [][]byte
	for _, glob := range []string{"*.json.golden", filepath.Join("captured", "*.json")} {
		files, err := filepath.Glob(filepath.Join("..", "prove", "testdata", glob))
		if err != nil || len(files) == 0 {
			t.Fatalf("no prove reports %s (%v)", glob, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, b)
		}
	}
	return docs
}

// readProve reads a prove report as the VM suite does: CheckJSON with
// prove's rules, then encoding/json.
func readProve(b []byte) error {
	if err := reportv1.CheckJSON(b, reflect.TypeFor[prove.Report](), prove.ReportTypes()); err != nil {
		return err
	}
	var r prove.Report
	return json.Unmarshal(b, &r)
}

// lineDocs are the lines of the report package's jsonl goldens.
func lineDocs(t *testing.T) [][]byte {
	var docs [][]byte
	for _, f := range goldenFiles(t, "*.jsonl") {
		docs = append(docs, bytes.Split(bytes.TrimSpace(f), []byte("\n"))...)
	}
	return docs
}

func goldenFiles(t *testing.T, glob string) [][]byte {
	files, err := filepath.Glob(filepath.Join("..", "..", "shared", "report", "testdata", glob))
	if err != nil || len(files) == 0 {
		t.Fatalf("no goldens %s: %v", glob, err)
	}
	var docs [][]byte
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, b)
	}
	return docs
}

// surveyDocs are a host's survey (WriteJSON) of a VM with a report, an
// unknown VM and a VM judged on its source's API, and the merge of it
// with a second host's survey.
func surveyDocs(t *testing.T) [][]byte {
	rep := fleettest.RealisticReport(fullIdentity())
	rep.Checks = rep.Checks[:1]
	vms := []VM{
		{Name: "web1", Source: "libvirt", Status: Pass, AgentVersion: "9.2.0", Report: &rep, Networks: map[string]string{"52:54:00:00:00:01": "default"}},
		{Name: "db1", Source: "libvirt", Status: Unknown, Reason: "no agent"},
		{Name: "k1", Source: "kubevirt", Status: Warn, Host: "node1", APIIdentity: &guestid.Identity{Hostname: "k1"},
			Firmware: &guestid.Firmware{UUID: "u", Serial: "s"}, AgentDisabled: []string{"guest-exec"}},
	}
	dir := t.TempDir()
	a := writeSurvey(t, dir, "hv-a.json", "hv-a", vms)
	b := writeSurvey(t, dir, "hv-b.json", "hv-b", vms[:1])
	m, err := Merge([]string{a, b}, MergeOptions{HostName: "merger"})
	if err != nil {
		t.Fatal(err)
	}
	m.SourceErrors = []SourceError{{Source: "proxmox", Error: "no such file"}}
	var merged bytes.Buffer
	if err := WriteJSON(&merged, m); err != nil {
		t.Fatal(err)
	}
	one, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{one, merged.Bytes()}
}

// mergeOne merges survey b alone, as guestcheck fleet --merge reads it.
func mergeOne(dir string, b []byte) error {
	p := filepath.Join(dir, "survey.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		return err
	}
	_, err := Merge([]string{p}, MergeOptions{HostName: "merger"})
	return err
}

func fullIdentity() *guestid.Identity {
	return &guestid.Identity{MachineIDHash: strings.Repeat("ab", 16), MachineIDState: "valid",
		OtherMachineIDs: []guestid.MachineIDCopy{{Hash: strings.Repeat("cd", 16), Source: "/var/lib/dbus/machine-id"}},
		HostKeys:        []guestid.HostKey{{Type: "ssh-ed25519", Fingerprint: "SHA256:" + strings.Repeat("A", 43), Path: "/etc/ssh/k"}},
		DHCPClients:     []guestid.DHCPClient{{Kind: "duid", Value: "00:01", Source: "/var/lib/dhcp/x:3", Interface: "eth0"}},
		MACBindings:     []guestid.MACBinding{{MAC: "52:54:00:00:00:01", At: "/etc/netplan/a.yaml:4", Kind: "netplan match: macaddress"}},
		Hostname:        "web1", InstanceID: "i-1",
		Interfaces: []guestid.Interface{{Name: "eth0", MAC: "52:54:00:00:00:01", Addresses: []string{"192.0.2.1/24"}}},
		Unread:     []string{"dhcp: permission denied"}}
}

// mutation is one changed document, what was changed, and the gap it
// may fall into.
type mutation struct {
	doc  []byte
	what string
	gap  int
}

var (
	datetimeRE = regexp.MustCompile(reportv1.Patterns["datetime"])
	// The keys a repeated- or other-case-key mutation writes, replaced
	// in the encoded text.
	markerRE = regexp.MustCompile(`"~(dup|case)~([^"]*)"`)
)

// mutations are doc's systematic mutations, but for paths skip matches.
func mutations(t *testing.T, doc []byte, skip *regexp.Regexp) []mutation {
	var root any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		t.Fatal(err)
	}
	var out []mutation
	add := func(what string, gap int, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b = markerRE.ReplaceAllFunc(b, func(m []byte) []byte {
			sub := markerRE.FindSubmatch(m)
			if string(sub[1]) == "case" {
				return []byte(`"` + strings.ToUpper(string(sub[2])) + `"`)
			}
			return []byte(`"` + string(sub[2]) + `"`)
		})
		out = append(out, mutation{b, what, gap})
	}
	for _, w := range []string{"null", "[]", "{}", `"x"`} {
		out = append(out, mutation{[]byte(w), "the document " + w, gapNone})
	}
	visit := func(at string, v any, set func(any)) {
		if skip != nil && skip.MatchString(at) {
			return
		}
		try := func(what string, gap int, nv any) {
			set(nv)
			add(at+": "+what, gap, root)
			set(v)
		}
		switch v := v.(type) {
		case map[string]any:
			try("an array", gapNone, []any{})
			for _, k := range sortedKeys(v) {
				old := v[k]
				delete(v, k)
				add(at+"/"+k+": dropped", gapNone, root)
				v[k] = nil
				add(at+"/"+k+": null", gapNone, root)
				v[k] = old
				v["~dup~"+k] = old
				add(at+"/"+k+": given twice", gapRepeated, root)
				delete(v, "~dup~"+k)
				v["~case~"+k] = old
				add(at+"/"+k+": also in upper case", gapCase, root)
				delete(v, "~case~"+k)
			}
			v["zz_extra"] = true
			add(at+": an extra key", gapNone, root)
			delete(v, "zz_extra")
		case []any:
			try("empty", gapNone, []any{})
			try("a string", gapNone, "x")
		case string:
			for _, s := range []string{"", "x", "Not Kebab!", "warn", "fail", "unknown", "pass", "ssh-host-key", "2026-13-45", "2026-12-07T10:00"} {
				try(fmt.Sprintf("%q", s), gapNone, s)
			}
			try("a number", gapNone, json.Number("7"))
			if datetimeRE.MatchString(v) {
				try("30 February", gapDate, "2026-02-30T10:00:00Z")
			}
		case json.Number:
			for _, n := range []string{"-1", "0", "1", "2", "3", "4", "5", "6", "1.5"} {
				try(n, gapNone, json.Number(n))
			}
			try(string(v)+".0", gapDecimal, json.Number(string(v)+".0"))
			try("a string", gapNone, "1")
		case bool:
			try("a string", gapNone, "true")
		}
	}
	visit("", root, func(nv any) { root = nv })
	walk(root, "", visit)
	return out
}

// walk calls fn for every value under v, with its JSON pointer and a
// function that replaces it in its parent.
func walk(v any, at string, fn func(at string, v any, set func(any))) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			fn(at+"/"+k, v[k], func(nv any) { v[k] = nv })
			walk(v[k], at+"/"+k, fn)
		}
	case []any:
		for i := range v {
			fn(fmt.Sprintf("%s/%d", at, i), v[i], func(nv any) { v[i] = nv })
			walk(v[i], fmt.Sprintf("%s/%d", at, i), fn)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
