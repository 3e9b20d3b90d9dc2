package fleet

import (
	"bufio"
	"bytes"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv/promrules"
)

const rulesFile = "../../../packaging/examples/prometheus-guestcheck-rules.yml"

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
// shared item, a failing alert per failing or error VM, an unknown alert per
// unknown VM, and no stale alert while surveys continue.
func TestFleetAlertRules(t *testing.T) {
	rules := promrules.Load(t, rulesFile)
	const instance = "hv1:9847"
	want := map[string][]promrules.Alert{"GuestcheckFleetSharedIdentity": {}, "GuestcheckFleetVMFailing": {}, "GuestcheckFleetVMUnknown": {}, "GuestcheckFleetStale": {}}
	var inputs []promrules.Series
	sels := series(t, render(t, sampleSurvey(t), FormatPrometheus))
	keys := make([]string, 0, len(sels))
	for k := range sels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, sel := range keys {
		v := sels[sel]
		vals := v + "x150"
		if strings.HasPrefix(sel, "guestcheck_fleet_last_survey_timestamp_seconds") {
			vals = "0+60x150"
		}
		inputs = append(inputs, promrules.Series{Series: promrules.WithInstance(sel, instance), Values: vals})
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
		ann := rules.Annotations(t, alert, l, v)
		l["severity"] = sev
		want[alert] = append(want[alert], promrules.Alert{Labels: l, Annotations: ann})
	}
	var tests []promrules.AlertTest
	for name, e := range want {
		tests = append(tests, promrules.AlertTest{EvalTime: "2h", Alertname: name, ExpAlerts: e})
	}
	if len(want["GuestcheckFleetSharedIdentity"]) != 4 || len(want["GuestcheckFleetVMFailing"]) != 4 || len(want["GuestcheckFleetVMUnknown"]) != 2 {
		t.Fatalf("the sample survey should fire 4 collision, 4 failing (one of them error) and 2 unknown alerts: %v", want)
	}
	rules.Run(t, []promrules.Test{{Interval: "1m", Input: inputs, Alerts: tests}})
}
