package cloudcfg

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// fragments are pieces of system configuration where a reading can go
// wrong: YAML 1.1 scalars, type clashes between files (a mapping over a
// string or a list, a list over a mapping), nested mappings, files
// cloud-init cannot load.
var fragments = []string{
	"",
	"network: {config: disabled}\n",
	"network: {version: 2}\n",
	"network: disabled\n",
	"network: [a, b]\n",
	"network:\n  config: disabled\n  version: 1\n",
	"preserve_hostname: yes\nhostname: 0644\n",
	"preserve_hostname: 0x1\nhostname: web1\n",
	"preserve_hostname: ~\n",
	"hostname: {a: 1}\n",
	"base: &b {preserve_hostname: on}\n<<: *b\n",
	"cloud_init_modules: [migrator, [ssh, always]]\n",
	"cloud_init_modules: {name: ssh}\n",
	"ssh_genkeytypes: []\nsystem_info: {default_user: {name: debian, groups: [adm]}}\n",
	"system_info: {default_user: {name: ubuntu}, distro: ubuntu}\n",
	"system_info: [x]\n",
	"a: [\n",
	"- not a mapping\n",
	"a: 1\n---\nb: 2\n",
	"x: 1.5\ny: -0\nz: 1_000\n",
	// merge_how and merge_type: a file's own merge rules (mergers).
	"l: [base]\nd: {l: [b], s: s1, x: 0}\ns: head\nhostname: web1\n",
	"merge_how: 'dict(replace)+list(append)+str()'\nnetwork: {config: enabled}\nl: [x]\n",
	"merge_how: [{name: list, settings: [prepend]}, {name: dict, settings: [no_replace, recurse_list]}]\nl: [p]\nd: {l: [q]}\n",
	"merge_type: 'list(append)+dict(recurse_str)+str(append)'\ns: tail\nd: {s: more}\n",
	"merge_how: 'dict(allow_delete,no_replace)'\nhostname: ~\nd: {x: ~}\n",
	"merge_how: 'list(append)'\nl: [only-list]\n",
	"merge_how: [[dict, replace], [list, recurse_dict]]\nd: {x: 1}\nl: [{a: 1}]\n",
	"merge_how: ~\nmerge_type: 'Dict(Replace) + List()'\na: typed\nl: [t]\n",
	"merge_how: [{name: dict, settings: no_replace}]\nhostname: kept\n",
}

const readConfScript = `
import json, sys
from cloudinit import util
print(json.dumps([util.read_conf_with_confd(d + "/etc/cloud/cloud.cfg") for d in sys.argv[1:]]))
`

// TestAgainstCloudInit reads generated system configurations with Read
// and with the installed cloud-init's util.read_conf_with_confd and
// requires the same merged configuration.
func TestAgainstCloudInit(t *testing.T) {
	ci := testenv.Tool(t, "cloud-init", "cloud-init")
	head, err := os.ReadFile(ci)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(head), "\n")
	py := strings.Fields(strings.TrimPrefix(line, "#!"))[0]

	r := rand.New(rand.NewSource(22))
	names := []string{"cloud.cfg", "cloud.cfg.d/05-a.cfg", "cloud.cfg.d/50-b.cfg", "cloud.cfg.d/90-c.cfg", "cloud.cfg.d/91-d.conf"}
	var dirs []string
	var got []map[string]any
	for i := 0; i < 200; i++ {
		files := map[string]string{}
		for _, n := range names {
			if r.Intn(3) > 0 {
				files["/etc/cloud/"+n] = fragments[r.Intn(len(fragments))]
			}
		}
		if len(files) == 0 {
			files["/etc/cloud/cloud.cfg"] = fragments[1]
		}
		dir := tree(t, files)
		root, _ := openBoth(t, dir)
		dirs = append(dirs, dir)
		got = append(got, Read(root).Merged)
	}
	out, err := exec.Command(py, append([]string{"-c", readConfScript}, dirs...)...).Output()
	if err != nil {
		t.Fatalf("cloud-init: %v", err)
	}
	var want []any
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(dirs) {
		t.Fatalf("cloud-init answered %s (%v)", out, err)
	}
	for i := range dirs {
		b, err := json.Marshal(got[i])
		if err != nil {
			t.Fatal(err)
		}
		var g any
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[i], g); d != "" {
			files, _ := exec.Command("sh", "-c", fmt.Sprintf("cd %s && grep -r . etc", dirs[i])).Output()
			t.Errorf("case %d (-cloud-init +Read):\n%s\nfiles:\n%s", i, d, files)
		}
	}
}
