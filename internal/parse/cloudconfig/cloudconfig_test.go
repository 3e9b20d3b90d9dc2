package cloudconfig

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

func TestScalars(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"yes", true}, {"No", false}, {"on", true}, {"OFF", false}, {"y", "y"}, {"n", "n"},
		{"'yes'", "yes"}, {`"0644"`, "0644"}, {"!!str yes", "yes"},
		{"0644", int64(420)}, {"0o644", "0o644"}, {"08", "08"}, {"1_000", int64(1000)}, {"0x1F", int64(31)},
		{"0b101", int64(5)}, {"1:30", int64(90)}, {"-12", int64(-12)}, {"1.5", 1.5}, {"1e3", "1e3"}, {"1.0e+3", 1000.0},
		{"~", nil}, {"null", nil}, {"", nil}, {"None", "None"}, {"2024-01-01", Timestamp{"2024-01-01"}}, {"2024-1-1", "2024-1-1"}, {"!!binary aGk=", "hi"},
	} {
		d, err := Parse("t", []byte("k: "+tc.in+"\n"))
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := d.Value["k"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"a: [1\n":      "t:",
		"- a\n- b\n":   "t:1: top level is an array",
		"a: b\n c: d:": "not valid YAML",
		// PyYAML's safe_load: "expected a single document in the stream".
		"a: 1\n---\nb: 2\n": "t:2: more than one YAML document",
		"---\n---\n":        "t:2: more than one YAML document",
		"a: 1\n---\n[x\n":   "t:2: not valid YAML",
	} {
		_, err := Parse("t", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
	d, err := Parse("t", []byte("#cloud-config\n"))
	if err != nil || len(d.Value) != 0 {
		t.Errorf("empty document: %v %v", d, err)
	}
}

func TestLines(t *testing.T) {
	d, err := Parse("t", []byte("#cloud-config\nusers:\n  - name: ops\n    ssh_authorized_keys:\n      - k1\n      - k2\npackages: [a, b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]int{"users": 2, "users[0]": 3, "users[0].name": 3, "users[0].ssh_authorized_keys[1]": 6, "packages[1]": 7} {
		if got := d.Line(p); got != want {
			t.Errorf("Line(%s) = %d, want %d", p, got, want)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	in := "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
	if _, err := Parse("t", []byte(in)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("alias bomb: %v", err)
	}
}

func TestTranslateBool(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{{true, true}, {false, false}, {"yes", true}, {" On ", true}, {"1", true}, {int64(1), true}, {int64(2), false},
		{"no", false}, {"", false}, {nil, false}, {[]any{}, false}, {"y", false}, {1.0, false}} {
		if got := TranslateBool(tc.v); got != tc.want {
			t.Errorf("TranslateBool(%#v) = %v", tc.v, got)
		}
	}
}

func TestMergeMany(t *testing.T) {
	a := map[string]any{"x": int64(1), "d": map[string]any{"k": "a"}, "l": []any{"a"}}
	b := map[string]any{"x": int64(2), "d": map[string]any{"k": "b", "j": "b"}, "l": []any{"b"}, "y": "b"}
	got := MergeMany(a, b)
	want := map[string]any{"x": int64(1), "d": map[string]any{"k": "a", "j": "b"}, "l": []any{"a"}, "y": "b"}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
	if _, ok := a["y"]; ok {
		t.Error("MergeMany modified its input")
	}
	// mergemanydict's string and list mergers hand back a dictionary
	// merged into them; every other earlier value stays (checked against
	// cloud-init 22.4 and main).
	a = map[string]any{"s": "x", "l": []any{"a"}, "n": int64(1), "z": nil, "t": true, "d": map[string]any{"s": "x"}}
	b = map[string]any{"s": map[string]any{"k": "b"}, "l": map[string]any{"k": "b"}, "n": map[string]any{"k": "b"},
		"z": map[string]any{"k": "b"}, "t": map[string]any{"k": "b"}, "d": map[string]any{"s": map[string]any{"k": "b"}}}
	want = map[string]any{"s": map[string]any{"k": "b"}, "l": map[string]any{"k": "b"}, "n": int64(1), "z": nil, "t": true,
		"d": map[string]any{"s": map[string]any{"k": "b"}}}
	if d := cmp.Diff(want, MergeMany(a, b)); d != "" {
		t.Error(d)
	}
	sys := System(map[string]any{"a": "base", "b": "base"}, []map[string]any{{"a": "10", "c": "10"}, {"a": "90"}})
	if sys["a"] != "90" || sys["b"] != "base" || sys["c"] != "10" {
		t.Errorf("System = %v", sys)
	}
}

var debianDefault = map[string]any{"system_info": map[string]any{"default_user": map[string]any{
	"name": "debian", "lock_passwd": true, "groups": []any{"adm", "sudo"}, "sudo": []any{"ALL=(ALL) NOPASSWD:ALL"}, "shell": "/bin/bash"}}}

func TestNormalizeUsers(t *testing.T) {
	for _, tc := range []struct {
		name, ud string
		want     string // name:default:path;...
	}{
		{"missing users", "{}", ""},
		{"default", "users: [default]", "debian:true:users[0]"},
		{"article", "users:\n  - name: ops\n    groups: sudo\n", "ops:false:users[0]"},
		{"default and ops", "users:\n  - default\n  - name: ops\n", "ops:false:users[1];debian:true:users[0]"},
		{"string form", "users: 'b, a'", "a:false:users;b:false:users"},
		{"dict form", "users: {ops: {shell: /bin/sh}, x: true, y: false}", "ops:false:users.ops;x:false:users.x"},
		{"repeated", "users: [{name: a, shell: /bin/sh}, {name: a, uid: 5}]", "a:false:users[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse("t", []byte(tc.ud))
			if err != nil {
				t.Fatal(err)
			}
			us, _ := NormalizeUsers(Effective(d.Value, debianDefault))
			var parts []string
			for _, u := range us {
				parts = append(parts, u.Name+":"+PyStr(u.Default)[0:0]+map[bool]string{true: "true", false: "false"}[u.Default]+":"+u.Path)
			}
			if got := strings.Join(parts, ";"); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

// TestAgainstCloudInit feeds cloud-init's own YAML loader and
// normalize_users_groups the same documents and compares the results.
func TestAgainstCloudInit(t *testing.T) {
	py := cloudInitPython(t)
	docs := []string{
		"users: [default]",
		"users:\n  - default\n  - name: ops\n    groups: [sudo, adm]\n    lock-passwd: no\n",
		"users:\n  - name: debian\n    groups: video\n  - default\n",
		"user: admin\nusers: [ops]",
		"users: {ops: {shell: /bin/sh}, x: on, y: off}",
		"users: 'b, a, b'",
		"users:\n  - name: a\n    uid: 0o10\n    sudo: false\n  - name: a\n    gecos: x\n",
		"users:\n  - default\n  - name: ops\n    primary_group: wheel\n    ssh_authorized_keys: [k1, k2]\n",
		"users: []",
		"permissions: 0644\nflag: yes\nnum: 1_000\nsexa: 1:30\nf: 1.5e+3\nn: ~\ns: 08\nhex: 0x1f\n",
	}
	for _, ud := range docs {
		d, err := Parse("t", []byte(ud))
		if err != nil {
			t.Fatalf("%q: %v", ud, err)
		}
		us, _ := NormalizeUsers(Effective(d.Value, debianDefault))
		got := map[string]any{"doc": normJSON(t, d.Value)}
		um := map[string]any{}
		for _, u := range us {
			c := MergeMany(u.Config)
			c["default"] = u.Default
			um[u.Name] = c
		}
		got["users"] = normJSON(t, um)
		want := pythonNormalize(t, py, ud)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q (-cloud-init +ours):\n%s", ud, diff)
		}
	}
}

func normJSON(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const pyScript = `
import json, sys, yaml
from cloudinit.distros import ug_util
class D:
    def get_default_user(self):
        return {"name": "debian", "lock_passwd": True, "groups": ["adm", "sudo"], "sudo": ["ALL=(ALL) NOPASSWD:ALL"], "shell": "/bin/bash"}
doc = yaml.safe_load(sys.stdin.read()) or {}
users, _ = ug_util.normalize_users_groups(json.loads(json.dumps(doc)), D())
for u in users.values():
    g = u.get("groups")
    if isinstance(g, list):
        u["groups"] = g
print(json.dumps({"doc": doc, "users": users}, default=str))
`

// cloudInitPython is the interpreter cloud-init runs under (its #! line),
// which is the one that can import cloudinit.
func cloudInitPython(t *testing.T) string {
	ci := testenv.Tool(t, "cloud-init", "cloud-init")
	b, err := os.ReadFile(ci)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if !strings.HasPrefix(first, "#!") {
		t.Fatalf("%s has no #! line", ci)
	}
	return strings.Fields(strings.TrimPrefix(first, "#!"))[0]
}

func pythonNormalize(t *testing.T, py, ud string) any {
	cmd := exec.Command(py, "-c", pyScript)
	cmd.Stdin = strings.NewReader(ud)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init's normalize_users_groups on %q: %v", ud, err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return v
}

func FuzzParse(f *testing.F) {
	f.Add("#cloud-config\nusers:\n  - default\n  - name: ops\n    groups: sudo\n")
	f.Add("a: &x {b: 1}\nc:\n  <<: *x\n  d: yes\n")
	f.Add("k: 0644\n")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse("t", []byte(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if _, err := json.Marshal(d.Value); err != nil && !strings.Contains(err.Error(), "unsupported value") {
			t.Fatalf("value not JSON-able: %v", err)
		}
		_, _ = NormalizeUsers(d.Value)
		_, _ = NormalizeGroups(d.Value)
		_ = math.Abs(0)
	})
}
