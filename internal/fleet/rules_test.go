package fleet

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

const rulesFile = "../../packaging/examples/prometheus-guestcheck-rules.yml"

// series reads the exposition format into series selector -> value.
func series(t *testing.T, b []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		out[l[:i]] = l[i+1:]
	}
	return out
}

var labelRE = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)

// labelsOf reads a selector's labels (values unescaped).
func labelsOf(sel string) map[string]string {
	out := map[string]string{}
	for _, m := range labelRE.FindAllStringSubmatch(sel, -1) {
		out[m[1]] = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n").Replace(m[2])
	}
	return out
}

// TestFleetAlertRules runs the example fleet alerts through promtool
// test rules on the sample survey's metrics: a collision alert per
// shared item, a failing alert per failing VM, an unknown alert per
// unknown VM, and no stale alert while surveys continue.
func TestFleetAlertRules(t *testing.T) {
	promtool := testenv.Tool(t, "promtool", "prometheus")
	rules, _ := filepath.Abs(rulesFile)
	if out, err := exec.Command(promtool, "check", "rules", rules).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	var rf struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	rb, _ := os.ReadFile(rules)
	if err := yaml.Unmarshal(rb, &rf); err != nil {
		t.Fatal(err)
	}
	const instance = "hv1:9847"
	annotations := func(alert string, labels map[string]string, value string) map[string]string {
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				if r.Alert != alert {
					continue
				}
				out := map[string]string{}
				for k, v := range r.Annotations {
					for l, lv := range labels {
						v = strings.ReplaceAll(v, "{{ $labels."+l+" }}", lv)
					}
					out[k] = strings.ReplaceAll(v, "{{ $value }}", value)
				}
				return out
			}
		}
		t.Fatalf("no alert %s in %s", alert, rules)
		return nil
	}
	type exp struct {
		Labels      map[string]string `yaml:"exp_labels"`
		Annotations map[string]string `yaml:"exp_annotations"`
	}
	type alertTest struct {
		EvalTime  string `yaml:"eval_time"`
		Alertname string `yaml:"alertname"`
		ExpAlerts []exp  `yaml:"exp_alerts"`
	}
	type in struct {
		Series string `yaml:"series"`
		Values string `yaml:"values"`
	}
	want := map[string][]exp{"GuestcheckFleetSharedIdentity": {}, "GuestcheckFleetVMFailing": {}, "GuestcheckFleetVMUnknown": {}, "GuestcheckFleetStale": {}}
	var inputs []in
	sels := series(t, render(t, sampleSurvey(t), FormatPrometheus))
	keys := make([]string, 0, len(sels))
	for k := range sels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, sel := range keys {
		v := sels[sel]
		withInst := strings.TrimSuffix(sel, "}") + `,instance="` + instance + `"}`
		if !strings.Contains(sel, "{") {
			withInst = sel + `{instance="` + instance + `"}`
		}
		vals := v + "x150"
		if strings.HasPrefix(sel, "guestcheck_fleet_last_survey_timestamp_seconds") {
			vals = "0+60x150"
		}
		inputs = append(inputs, in{withInst, vals})
		l := labelsOf(sel)
		l["instance"] = instance
		name, _, _ := strings.Cut(sel, "{")
		alert, sev := "", ""
		switch {
		case name == "guestcheck_fleet_collisions" && v != "0":
			alert, sev = "GuestcheckFleetSharedIdentity", "critical"
		case name == "guestcheck_fleet_vm_status" && v == "1" && (l["status"] == "fail" || l["status"] == "error"):
			alert, sev = "GuestcheckFleetVMFailing", "critical"
		case name == "guestcheck_fleet_vm_status" && v == "1" && l["status"] == "unknown":
			alert, sev = "GuestcheckFleetVMUnknown", "warning"
		default:
			continue
		}
		ann := annotations(alert, l, v)
		l["severity"] = sev
		want[alert] = append(want[alert], exp{l, ann})
	}
	var tests []alertTest
	for name, e := range want {
		tests = append(tests, alertTest{EvalTime: "2h", Alertname: name, ExpAlerts: e})
	}
	if len(want["GuestcheckFleetSharedIdentity"]) != 4 || len(want["GuestcheckFleetVMFailing"]) != 3 || len(want["GuestcheckFleetVMUnknown"]) != 2 {
		t.Fatalf("the sample survey should fire 4 collision, 3 failing and 2 unknown alerts: %v", want)
	}
	doc, err := yaml.Marshal(map[string]any{"rule_files": []string{rules}, "evaluation_interval": "1m",
		"tests": []any{map[string]any{"interval": "1m", "input_series": inputs, "alert_rule_test": tests}}})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rules_test.yml")
	os.WriteFile(p, doc, 0o644)
	if out, err := exec.Command(promtool, "test", "rules", p).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
