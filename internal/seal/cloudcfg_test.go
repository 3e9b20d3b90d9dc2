package seal

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks/hostname"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

func TestParseCloudConfig(t *testing.T) {
	tests := []struct {
		name    string
		base    string
		dropins []string
		want    cloudConfig
	}{
		{"debian default", cloudCfg, nil, cloudConfig{SSHModule: true, KeyTypes: true}},
		{"no ssh module", "cloud_init_modules: [migrator, users-groups]\n", nil, cloudConfig{KeyTypes: true}},
		{"no key types", cloudCfg, []string{"ssh_genkeytypes: []\n"}, cloudConfig{SSHModule: true}},
		{"null key types", cloudCfg, []string{"ssh_genkeytypes:\n"}, cloudConfig{SSHModule: true}},
		{"override drops ssh", cloudCfg, []string{"cloud_init_modules: [migrator]\n"}, cloudConfig{KeyTypes: true}},
		{"later drop-in wins", "", []string{"cloud_init_modules: [ssh]\n", "cloud_init_modules: [migrator]\n"}, cloudConfig{KeyTypes: true}},
		{"network disabled", cloudCfg, []string{"network: {config: disabled}\n"}, cloudConfig{SSHModule: true, KeyTypes: true, NetworkDisabled: true}},
		// cloud-init merges dictionaries key by key: a drop-in's network
		// block does not drop cloud.cfg's config: disabled.
		{"network merged", "network: {config: disabled}\n", []string{"network: {version: 2}\n"}, cloudConfig{KeyTypes: true, NetworkDisabled: true}},
		{"map form", "cloud_init_modules:\n - {name: cc_ssh}\n", nil, cloudConfig{SSHModule: true, KeyTypes: true}},
		{"module file name", "cloud_config_modules: [' ssh.py ']\n", nil, cloudConfig{SSHModule: true, KeyTypes: true}},
		{"bad drop-in skipped", "network: {config: disabled}\n", []string{"a: [\n", "- x\n"}, cloudConfig{KeyTypes: true, NetworkDisabled: true}},
	}
	for _, tc := range tests {
		var drops []cloudFile
		for i, d := range tc.dropins {
			drops = append(drops, cloudFile{fmt.Sprintf("d%d.cfg", i), []byte(d)})
		}
		got, errs := parseCloudConfig(cloudFile{"cloud.cfg", []byte(tc.base)}, drops)
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
		if tc.name != "bad drop-in skipped" && len(errs) > 0 {
			t.Errorf("%s: %v", tc.name, errs)
		}
	}
	_, errs := parseCloudConfig(cloudFile{"cloud.cfg", []byte("a: 1\n")}, []cloudFile{{"10-x.cfg", []byte("a: [\n")}, {"20-y.cfg", []byte("- x\n")}})
	if len(errs) != 2 || errs[0].File != "10-x.cfg" || errs[1].Error() != "20-y.cfg:1: top level is an array, not a mapping of cloud-config keys" {
		t.Errorf("errors = %v", errs)
	}
}

// cloudCfgCase is a set of files under /etc/cloud, by name.
type cloudCfgCase map[string]string

// cloudCfgFragments are pieces of system configuration on which the
// two readings this repository had (seal's plain map with top-level
// replacement, hostname's own translate_bool) disagreed with cloud-init.
var cloudCfgFragments = []string{
	"",
	cloudCfg,
	"network: {config: disabled}\n",
	"network: {version: 2}\n",
	"network:\n  config: disabled\n  version: 1\n",
	"preserve_hostname: \"yes\"\n",
	"preserve_hostname: yes\n",
	"preserve_hostname: 0x1\n",
	"preserve_hostname: 01\n",
	"preserve_hostname: 1.0\n",
	"preserve_hostname: ~\n",
	"preserve_hostname: false\n",
	"preserve_hostname: \"On \"\n",
	"base: &b {preserve_hostname: on}\n<<: *b\n",
	"hostname: web1\n",
	"hostname: 0644\n",
	"hostname: yes\n",
	"cloud_init_modules: [migrator]\n",
	"cloud_init_modules: [[ssh, always]]\n",
	"cloud_config_modules: [{name: cc_ssh}]\n",
	"cloud_final_modules: [' ssh.py ']\n",
	"ssh_genkeytypes: []\n",
	"ssh_genkeytypes: ~\n",
	"ssh_genkeytypes: ed25519\n",
	"a: [\n",
	"- not a mapping\n",
	"preserve_hostname: true\n---\nhostname: two-docs\n",
}

// cloudCfgFacts is what seal and hostname each read from a case.
type cloudCfgFacts struct {
	SSH, KeyTypes, NetDisabled, Preserve bool
	Hostname                             *string
}

// TestCloudCfgOneReading reads the same system configurations with seal's
// planner and hostname's check parser and compares both with cloud-init's
// own read_conf_with_confd, get_cfg_option_bool and module loader. Before
// both used internal/parse/cloudconfig they disagreed, e.g. on
// "preserve_hostname: 0x1" and on a drop-in's network block.
func TestCloudCfgOneReading(t *testing.T) {
	py := cloudInitPython(t)
	cases := []cloudCfgCase{
		{"cloud.cfg": cloudCfg},
		{"cloud.cfg": "network: {config: disabled}\npreserve_hostname: false\n", "cloud.cfg.d/90-x.cfg": "network: {version: 2}\npreserve_hostname: \"yes\"\n"},
		{"cloud.cfg": cloudCfg, "cloud.cfg.d/10-a.cfg": "preserve_hostname: 0x1\n", "cloud.cfg.d/90-b.cfg": "cloud_init_modules: [migrator]\n"},
		{"cloud.cfg": cloudCfg, "cloud.cfg.d/50-bad.cfg": "a: [\n", "cloud.cfg.d/60-x.cfg": "ssh_genkeytypes: ~\n"},
		{"cloud.cfg": "preserve_hostname: true\n", "cloud.cfg.d/99-x.cfg": "preserve_hostname: ~\n", "cloud.cfg.d/99-y.conf": "network: {config: disabled}\n"},
	}
	r := rand.New(rand.NewSource(11))
	names := []string{"cloud.cfg.d/05-a.cfg", "cloud.cfg.d/50-b.cfg", "cloud.cfg.d/90-c.cfg", "cloud.cfg.d/91-d.conf"}
	for len(cases) < 60 {
		c := cloudCfgCase{"cloud.cfg": cloudCfgFragments[r.Intn(len(cloudCfgFragments))]}
		for _, n := range names {
			if r.Intn(2) == 0 {
				c[n] = cloudCfgFragments[r.Intn(len(cloudCfgFragments))]
			}
		}
		cases = append(cases, c)
	}

	var dirs []string
	for i, c := range cases {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		var nodes []node
		for n, data := range c {
			nodes = append(nodes, f("/etc/cloud/"+n, data))
		}
		sort.Slice(nodes, func(i, j int) bool { return nodes[i].Path < nodes[j].Path })
		build(t, dir, nodes)
		dirs = append(dirs, dir)
	}
	want := cloudInitFacts(t, py, dirs)

	for i, dir := range dirs {
		got := [2]cloudCfgFacts{sealFacts(t, dir), hostnameFacts(t, cases[i])}
		w := want[i]
		if s := got[0]; s.SSH != w.SSH || s.KeyTypes != w.KeyTypes || s.NetDisabled != w.NetDisabled {
			t.Errorf("case %d %v: seal reads ssh=%v keytypes=%v netdisabled=%v, cloud-init %v %v %v",
				i, cases[i], s.SSH, s.KeyTypes, s.NetDisabled, w.SSH, w.KeyTypes, w.NetDisabled)
		}
		if h := got[1]; h.Preserve != w.Preserve || fmt.Sprint(deref(h.Hostname)) != fmt.Sprint(deref(w.Hostname)) {
			t.Errorf("case %d %v: hostname reads preserve=%v hostname=%v, cloud-init preserve=%v hostname=%v",
				i, cases[i], h.Preserve, deref(h.Hostname), w.Preserve, deref(w.Hostname))
		}
	}
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func sealFacts(t *testing.T, dir string) cloudCfgFacts {
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cc, err := NewPlanner(c, Options{}).cloudConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cloudCfgFacts{SSH: cc.SSHModule, KeyTypes: cc.KeyTypes, NetDisabled: cc.NetworkDisabled}
}

// hostnameFacts layers the files as the hostname check does: cloud.cfg,
// then the drop-ins in name order; a file it cannot parse is left out,
// as cloud-init leaves it out.
func hostnameFacts(t *testing.T, c cloudCfgCase) cloudCfgFacts {
	var names []string
	for n := range c {
		if strings.HasPrefix(n, "cloud.cfg.d/") && strings.HasSuffix(n, ".cfg") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var layers []hostname.Layer
	for _, n := range append([]string{"cloud.cfg"}, names...) {
		if cfg, err := hostname.ParseCloudConfig([]byte(c[n])); err == nil {
			layers = append(layers, hostname.Layer{Source: n, Config: cfg})
		}
	}
	e := hostname.Merge(layers...)
	out := cloudCfgFacts{Preserve: e.PreserveHostname.Value}
	if e.Hostname.Set {
		out.Hostname = &e.Hostname.Value
	}
	return out
}

const cloudCfgScript = `
import json, sys
from cloudinit import util
from cloudinit.config.modules import Modules, form_module_name
from cloudinit.config.cc_ssh import GENERATE_KEY_NAMES
from cloudinit.net import is_disabled_cfg
out = []
for d in sys.argv[1:]:
    cfg = util.read_conf_with_confd(d + "/etc/cloud/cloud.cfg")
    m = Modules(None)
    m._cached_cfg = cfg
    ssh = any(form_module_name(x["mod"]) == "cc_ssh"
              for s in ("cloud_init_modules", "cloud_config_modules", "cloud_final_modules")
              for x in m._read_modules(s))
    h = cfg.get("hostname")
    out.append({"SSH": ssh,
                "KeyTypes": len(util.get_cfg_option_list(cfg, "ssh_genkeytypes", GENERATE_KEY_NAMES)) > 0,
                "NetDisabled": is_disabled_cfg(cfg.get("network")),
                "Preserve": util.get_cfg_option_bool(cfg, "preserve_hostname", False),
                "Hostname": None if h is None else str(h)})
print(json.dumps(out))
`

func cloudInitFacts(t *testing.T, py string, dirs []string) []cloudCfgFacts {
	cmd := exec.Command(py, append([]string{"-c", cloudCfgScript}, dirs...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init's reading: %v\n%s", err, stderr.String())
	}
	var out []cloudCfgFacts
	if err := json.Unmarshal(b, &out); err != nil || len(out) != len(dirs) {
		t.Fatalf("cloud-init's reading: %v: %s", err, b)
	}
	return out
}

// cloudInitPython is the interpreter cloud-init runs under (its #! line),
// the one that can import cloudinit.
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
