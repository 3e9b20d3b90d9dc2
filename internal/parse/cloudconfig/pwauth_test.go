package cloudconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestSSHPwAuth(t *testing.T) {
	tr, fa := true, false
	for _, tc := range []struct {
		in   string
		want *bool
		raw  string
	}{
		{"ssh_pwauth: true\n", &tr, "true"}, {"ssh_pwauth: yes\n", &tr, "yes"}, {"ssh_pwauth: 'On'\n", &tr, "On"}, {"ssh_pwauth: 1\n", &tr, "1"},
		{"ssh_pwauth: false\n", &fa, "false"}, {"ssh_pwauth: no\n", &fa, "no"}, {"ssh_pwauth: \"0\"\n", &fa, "0"}, {"ssh_pwauth: OFF\n", &fa, "OFF"},
		{"ssh_pwauth: unchanged\n", nil, "unchanged"}, {"ssh_pwauth: maybe\n", nil, "maybe"}, {"users: []\n", nil, ""}, {"", nil, ""}, {"- a\n", nil, ""},
		{"ssh_pwauth: true\nssh_pwauth: false\n", &fa, "false"}, {"a: &x no\nssh_pwauth: *x\n", &fa, "no"},
	} {
		got, raw, err := SSHPwAuth([]byte(tc.in))
		if err != nil {
			t.Errorf("SSHPwAuth(%q): %v", tc.in, err)
			continue
		}
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) || raw != tc.raw {
			t.Errorf("SSHPwAuth(%q) = %v, %q, want %v, %q", tc.in, ptr(got), raw, ptr(tc.want), tc.raw)
		}
	}
	for in, want := range map[string]string{
		"ssh_pwauth: [a]\n":          "line 1: ssh_pwauth is not a scalar",
		"a: 1\nssh_pwauth: {b: 1}\n": "line 2: ssh_pwauth is not a scalar",
		"a: 1\nb: [\n":               "line 2: not valid YAML: did not find expected node content",
		"a: 1\n---\nb: 2\n":          "line 2: more than one YAML document (cloud-init reads a single one)",
	} {
		_, _, err := SSHPwAuth([]byte(in))
		var ce *Error
		if !errors.As(err, &ce) || ce.String() != want {
			t.Errorf("SSHPwAuth(%q): %v, want *Error %q", in, err, want)
		}
	}
}

func ptr(b *bool) string {
	if b == nil {
		return "nil"
	}
	if *b {
		return "true"
	}
	return "false"
}

func FuzzSSHPwAuth(f *testing.F) {
	f.Add("#cloud-config\nssh_pwauth: true\n")
	f.Add("a: &x no\nssh_pwauth: *x\n")
	f.Add("ssh_pwauth: [a]\n")
	f.Fuzz(func(t *testing.T, s string) {
		v, raw, err := SSHPwAuth([]byte(s))
		if err != nil {
			if strings.Contains(err.Error(), "\n") || v != nil || raw != "" {
				t.Fatalf("error %q with %v, %q", err, v, raw)
			}
		}
	})
}

// cloudInitPwAuth runs cloud-init's own code on each document: load_yaml,
// then cc_set_passwords' util.is_true / util.is_false decision.
const cloudInitPwAuth = `
import json, sys
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    try:
        v = (util.load_yaml(doc) or {}).get("ssh_pwauth")
    except Exception:
        out.append("error"); continue
    out.append("yes" if util.is_true(v) else "no" if util.is_false(v) else "unchanged")
print(json.dumps(out))
`

// TestSSHPwAuthAgainstCloudInit feeds the same cloud-configs to SSHPwAuth
// and to the installed cloud-init and requires the same decision.
func TestSSHPwAuthAgainstCloudInit(t *testing.T) {
	py := cloudInitPython(t)
	if err := exec.Command(py, "-c", "import cloudinit.util").Run(); err != nil {
		t.Fatalf("%s cannot import cloud-init's modules: %v", py, err)
	}
	values := []string{"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "1", "01", "0x1", "+1", "0b1", "1_0", "0:1",
		"false", "no", "NO", "off", "Off", "0", "00", "-0", "0x0", "0.0", "1.0", "y", "n", "unchanged", "Unchanged", "maybe",
		"~", "null", "''", `"yes"`, `"1"`, `'01'`, `"0x1"`, `"off"`, "!!str 1", "!!str yes", "!!str 01", "!!int 01", "!!bool yes", "tRUE", "oN", "0o1", "2", "-1", "1e0"}
	var docs []string
	for _, v := range values {
		docs = append(docs, "#cloud-config\nssh_pwauth: "+v+"\n")
	}
	docs = append(docs, "#cloud-config\nusers: []\n", "", "#cloud-config\nssh_pwauth: yes\nssh_pwauth: no\n")
	in, _ := json.Marshal(docs)
	cmd := exec.Command(py, "-c", cloudInitPwAuth)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init: %v", err)
	}
	var real []string
	if err := json.Unmarshal(out, &real); err != nil || len(real) != len(docs) {
		t.Fatalf("cloud-init answered %s (%v)", out, err)
	}
	for i, doc := range docs {
		v, _, err := SSHPwAuth([]byte(doc))
		got := "unchanged"
		switch {
		case err != nil:
			got = "error"
		case v != nil && *v:
			got = "yes"
		case v != nil:
			got = "no"
		}
		if got != real[i] {
			t.Errorf("SSHPwAuth(%q) = %s, cloud-init says %s", doc, got, real[i])
		}
	}
}
