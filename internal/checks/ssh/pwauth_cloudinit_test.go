package ssh

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

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

// TestPwAuthAgainstCloudInit feeds the same cloud-configs to ParsePwAuth
// and to the installed cloud-init and requires the same decision.
func TestPwAuthAgainstCloudInit(t *testing.T) {
	// cloud-init's own interpreter, from its shebang: another python3
	// first in PATH (pyenv, a venv) lacks its modules.
	ci := testenv.Tool(t, "cloud-init", "cloud-init")
	head, err := os.ReadFile(ci)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(head), "\n")
	py := strings.Fields(strings.TrimPrefix(line, "#!"))[0]
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
		v, _, err := ParsePwAuth([]byte(doc))
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
			t.Errorf("ParsePwAuth(%q) = %s, cloud-init says %s", doc, got, real[i])
		}
	}
}
