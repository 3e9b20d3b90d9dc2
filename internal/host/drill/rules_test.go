package drill

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv/promrules"
)

const rulesFile = "../../../packaging/examples/prometheus-guestcheck-rules.yml"

// drillInputs are the series /metrics serves for sample()'s drill
// through a ResultsFile, as promtool input one minute apart for n
// minutes, the drill's timestamp set to ts (promtool's clock starts at
// 0) and the results file's state to ok.
func drillInputs(t *testing.T, instance string, n int, ts, ok string) []promrules.Series {
	t.Helper()
	var b bytes.Buffer
	if err := WritePrometheus(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var out []promrules.Series
	for _, l := range strings.Split(b.String(), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		sel, v := l[:i], l[i+1:]
		if sel == "guestcheck_freeze_drill_timestamp_seconds" {
			v = ts
		}
		out = append(out, promrules.Series{Series: promrules.WithInstance(sel, instance), Values: v + "x" + strconv.Itoa(n)})
	}
	return append(out, promrules.Series{Series: promrules.WithInstance(ResultsMetric, instance), Values: ok + "x" + strconv.Itoa(n)})
}

// TestFreezeDrillAlertRules runs the shipped freeze-drill alerts through
// promtool test rules on the series of sample()'s drill: db1 failed
// (critical), rhel1 could not be frozen (warning), web1 passed (no
// alert), db2 was named and is no running VM (warning); a drill two days
// old is stale, and a result file fleet cannot read is told.
func TestFreezeDrillAlertRules(t *testing.T) {
	rules := promrules.Load(t, filepath.Clean(rulesFile))
	const instance = "hv1:9847"
	alert := func(name, sev string, labels map[string]string, value string) promrules.Alert {
		l := map[string]string{"instance": instance}
		for k, v := range labels {
			l[k] = v
		}
		ann := rules.Annotations(t, name, l, value)
		l["severity"] = sev
		return promrules.Alert{Labels: l, Annotations: ann}
	}
	fresh := promrules.Test{Interval: "1m", Input: drillInputs(t, instance, 150, "0", "1"), Alerts: []promrules.AlertTest{
		{EvalTime: "2h", Alertname: "GuestcheckFreezeDrillFailed", ExpAlerts: []promrules.Alert{
			alert("GuestcheckFreezeDrillFailed", "critical", map[string]string{"vm": "db1", "source": "libvirt", "status": "fail"}, "1")}},
		{EvalTime: "2h", Alertname: "GuestcheckFreezeDrillUnknown", ExpAlerts: []promrules.Alert{
			alert("GuestcheckFreezeDrillUnknown", "warning", map[string]string{"vm": "rhel1", "source": "proxmox", "status": "unknown"}, "1")}},
		{EvalTime: "2h", Alertname: "GuestcheckFreezeDrillNotDrilled", ExpAlerts: []promrules.Alert{
			alert("GuestcheckFreezeDrillNotDrilled", "warning", nil, "1")}},
		{EvalTime: "2h", Alertname: "GuestcheckFreezeDrillStale", ExpAlerts: []promrules.Alert{}},
		{EvalTime: "2h", Alertname: "GuestcheckFreezeDrillResultsUnreadable", ExpAlerts: []promrules.Alert{}},
	}}
	// 49 hours on, no drill since the one at 0, and fleet can no longer
	// read the result: stale, and unreadable.
	old := promrules.Test{Interval: "1m", Input: drillInputs(t, instance, 3000, "0", "0"), Alerts: []promrules.AlertTest{
		{EvalTime: "47h", Alertname: "GuestcheckFreezeDrillStale", ExpAlerts: []promrules.Alert{}},
		{EvalTime: "49h", Alertname: "GuestcheckFreezeDrillStale", ExpAlerts: []promrules.Alert{
			alert("GuestcheckFreezeDrillStale", "warning", nil, "2d 1h 0m 0s")}},
		{EvalTime: "49h", Alertname: "GuestcheckFreezeDrillResultsUnreadable", ExpAlerts: []promrules.Alert{
			alert("GuestcheckFreezeDrillResultsUnreadable", "warning", nil, "0")}},
	}}
	rules.Run(t, []promrules.Test{fresh, old})
}
