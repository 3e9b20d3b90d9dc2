package cloudconfig

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	cc "github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// hostSchema is the schema of the cloud-init installed on this machine,
// which the Python side validates with.
const hostSchema = "/usr/lib/python3/dist-packages/" + SchemaRel

// pySchema runs cloud-init's own validate_cloudconfig_schema (the code
// behind `cloud-init schema -c FILE`) on each document and prints its
// errors and deprecations as (path, message) lists. The API is used
// rather than parsing --annotate output, which 22.4 cannot produce for
// errors on list items (it raises KeyError).
const pySchema = `
import json, sys, yaml
from cloudinit.config.schema import validate_cloudconfig_schema, get_schema, SchemaValidationError
schema = get_schema()
out = []
for doc in json.load(sys.stdin):
    cfg = yaml.safe_load(doc)
    res = {"errors": [], "deprecations": []}
    try:
        validate_cloudconfig_schema(cfg, schema, strict=True, log_details=False)
    except SchemaValidationError as e:
        res["errors"] = [p.path for p in e.schema_errors]
        res["deprecations"] = [p.path for p in e.schema_deprecations]
    out.append(res)
print(json.dumps(out))
`

func cloudInitSchema(t *testing.T, docs []string) []struct{ Errors, Deprecations []string } {
	py := cloudInitPython(t)
	in, _ := json.Marshal(docs)
	cmd := exec.Command(py, "-c", pySchema)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init's schema validation: %v", err)
	}
	var res []struct{ Errors, Deprecations []string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return res
}

// cloudInitPython is the interpreter of the cloud-init program.
func cloudInitPython(t *testing.T) string {
	ci := testenv.Tool(t, "cloud-init", "cloud-init")
	b, err := os.ReadFile(ci)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strings.Fields(strings.TrimPrefix(first, "#!"))[0]
}

var handDocs = []string{
	article,
	"runcmd: 5\n",
	"users:\n  - name: a\n    groups: 5\n    lock_passwd: \"x\"\n",
	"write_files:\n  - path: /x\n    permissions: 0644\n",
	"packages: [1, [a, b, c]]\n",
	"apt_upgrade: true\n",
	"chpasswd:\n  list: |\n    a:b\n",
	"ssh_pwauth: maybe\n",
	"ntp: {enabled: yes, servers: [a, 1]}\n",
	"mounts: [[vdb, /data], \"x\"]\n",
	"users: {ops: {shell: /bin/sh}}\n",
	"users: 'a,b'\n",
	"timezone: 5\ngrowpart: {mode: off}\nresize_rootfs: noblock\n",
	"ssh_genkeytypes: [rsa, 5]\nssh_authorized_keys: k\n",
	"bootcmd: [[echo, hi], 'echo x', 5]\n",
	"write_files:\n  - content: x\n  - path: /y\n    encoding: rot13\n    defer: maybe\n",
	"users:\n  - default\n  - name: x\n    sudo: false\n    expiredate: 2024-01-01\n",
	"disable_root: 1\nmanage_etc_hosts: localhost\nhostname: [a]\n",
	"package_update: yes\npackage_upgrade: 'true'\n",
	"pacakges: [tmux]\n",
}

// generated makes random documents from pieces of real cloud-config:
// known keys with values of the right and of the wrong type.
func generated(n int) []string {
	keys := []string{"runcmd", "bootcmd", "packages", "users", "write_files", "ssh_pwauth", "timezone", "ntp", "mounts",
		"ssh_genkeytypes", "disable_root", "groups", "package_update", "apt_upgrade", "chpasswd", "growpart", "hostname", "ssh_authorized_keys"}
	vals := []string{"5", "yes", "'text'", "[a, b]", "[1, 2]", "{a: 1}", "[[x, y]]", "~", "[{name: x}]", "[{path: /a, content: b}]",
		"{enabled: true}", "{list: 'a:b'}", "[default]", "0644", "1.5", "[{name: x, groups: [a], shell: /bin/sh}]", "{mode: auto}"}
	r := rand.New(rand.NewSource(42))
	var out []string
	for i := 0; i < n; i++ {
		var b strings.Builder
		for _, k := range r.Perm(len(keys))[:1+r.Intn(4)] {
			fmt.Fprintf(&b, "%s: %s\n", keys[k], vals[r.Intn(len(vals))])
		}
		out = append(out, b.String())
	}
	return out
}

// TestSchemaAgainstCloudInit: where cloud-init's own validator reports an
// error or a deprecation, we report one at the same key path. Extra
// findings of ours are only unknown top-level keys, which 22.4 does not
// report at all (documented on docs/checks/cloud-config.md).
func TestSchemaAgainstCloudInit(t *testing.T) {
	b, err := os.ReadFile(hostSchema)
	if err != nil {
		testenv.Tool(t, "cloud-init", "cloud-init")
		t.Fatalf("cloud-init is installed but its schema is not: %v", err)
	}
	s, err := CompileSchema(hostSchema, b)
	if err != nil {
		t.Fatal(err)
	}
	docs := append(append([]string{}, handDocs...), generated(150)...)
	want := cloudInitSchema(t, docs)
	for i, doc := range docs {
		d, err := cc.Parse("doc", []byte(doc))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		got := map[string][]string{}
		for _, p := range s.Validate(d) {
			got[p.Kind] = append(got[p.Kind], p.CIPath)
		}
		for kind, w := range map[string][]string{"error": want[i].Errors, "deprecation": want[i].Deprecations} {
			g := uniq(got[kind])
			w = uniq(w)
			sort.Strings(g)
			sort.Strings(w)
			if strings.Join(g, ",") != strings.Join(w, ",") {
				t.Errorf("doc %d %q: %s paths: cloud-init %v, ours %v", i, doc, kind, w, g)
			}
		}
	}
}
