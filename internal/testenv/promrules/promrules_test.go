package promrules

import (
	"fmt"
	"testing"
)

// TestWithInstance: the label goes inside the braces, or opens them.
func TestWithInstance(t *testing.T) {
	for in, want := range map[string]string{
		`up`:             `up{instance="h:1"}`,
		`up{job="a b"}`:  `up{job="a b",instance="h:1"}`,
		`x{a="1",b="2"}`: `x{a="1",b="2",instance="h:1"}`,
	} {
		if got := WithInstance(in, "h:1"); got != want {
			t.Errorf("WithInstance(%s) = %s, want %s", in, got, want)
		}
	}
}

// recorder keeps what Run reports with Errorf, so that a test can see a
// wrong expectation fail; everything else goes to the real test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestAnnotations expands each template form the rules use.
func TestAnnotations(t *testing.T) {
	rules := Load(t, "testdata/rules.yml")
	labels := map[string]string{"job": "node", "instance": "h:1"}
	for _, c := range []struct{ alert, value, want string }{
		{"Old", "30m 0s", "node on h:1 is 30m 0s old"},
		{"Stamped", "0", "stamp 0 from node"},
	} {
		if got := rules.Annotations(t, c.alert, labels, c.value); len(got) != 1 || got["summary"] != c.want {
			t.Errorf("Annotations(%s) = %q, want summary %q", c.alert, got, c.want)
		}
	}
}

// TestRun runs promtool on testdata/rules.yml twice: with the alerts and
// annotations it fires, which must pass, and with a wrong annotation,
// which promtool must report, so that a test built on Run can fail.
func TestRun(t *testing.T) {
	rules := Load(t, "testdata/rules.yml")
	labels := map[string]string{"__name__": "stamp_seconds", "job": "node", "instance": "h:1"}
	test := func(summary string) []Test {
		return []Test{{Interval: "1m", Input: []Series{{Series: `stamp_seconds{job="node",instance="h:1"}`, Values: "0x60"}},
			Alerts: []AlertTest{
				{EvalTime: "5m", Alertname: "Old", ExpAlerts: []Alert{}},
				{EvalTime: "30m", Alertname: "Old", ExpAlerts: []Alert{{
					Labels:      map[string]string{"job": "node", "instance": "h:1", "severity": "warning"},
					Annotations: map[string]string{"summary": summary}}}},
			}}}
	}
	rules.Run(t, test(rules.Annotations(t, "Old", labels, "30m 0s")["summary"]))
	rec := &recorder{TB: t}
	rules.Run(rec, test("node on h:1 is 29m 0s old"))
	if len(rec.errors) != 1 {
		t.Errorf("promtool test rules with a wrong annotation: %d errors, want 1: %q", len(rec.errors), rec.errors)
	}
}
