// Package promrules runs Prometheus's promtool over an alerting rules file
// for the tests of guestcheck's metrics (internal/shared/report) and of guestcheck
// fleet's (internal/host/fleet), which both hold the one shipped file,
// packaging/examples/prometheus-guestcheck-rules.yml, to the series they
// emit: promtool check rules lints it, and promtool test rules evaluates
// it over input series against the alerts, labels and annotations a test
// expects. What a test expects is its own; this package only loads the
// rules, expands their annotations and runs promtool. The guestcheck-identity
// group's alert runs queries in its annotations (the other guests sharing
// a value), which only Prometheus can expand: its test
// (internal/host/fleet, TestIdentityRulesAcrossHosts) writes them out.
//
// It is imported by tests only; nothing here runs in guestcheck itself.
package promrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// EvaluationInterval is the rule evaluation interval of every test file
// Run writes; Test.Interval is the input series' step.
const EvaluationInterval = "1m"

// Rules is an alerting rules file that promtool check rules accepted.
type Rules struct {
	// Path is the file's absolute path: a test file in a temporary
	// directory names it, and promtool resolves a relative one from there.
	Path     string
	promtool string
	// annotations holds each alert's annotation templates by alert name.
	annotations map[string]map[string]string
}

// Load finds promtool (Debian's prometheus package, by testenv.Tool),
// fails the test unless promtool check rules accepts the file at path,
// and reads the annotation templates of its alerts.
func Load(t testing.TB, path string) *Rules {
	t.Helper()
	promtool := testenv.Tool(t, "promtool", "prometheus")
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(promtool, "check", "rules", abs); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &rf); err != nil {
		t.Fatalf("%s: %v", abs, err)
	}
	r := &Rules{Path: abs, promtool: promtool, annotations: map[string]map[string]string{}}
	for _, g := range rf.Groups {
		for _, rule := range g.Rules {
			if rule.Alert != "" {
				r.annotations[rule.Alert] = rule.Annotations
			}
		}
	}
	return r
}

// Annotations expands alert's annotations as Prometheus does for one
// firing series: {{ $labels.NAME }} from labels, and {{ $value }} or
// {{ $value | humanizeDuration }} by value, which the caller writes as
// Prometheus prints it ("2", "30m 0s"). A template left over after that
// fails the test: the expectation would be wrong, not the rules.
func (r *Rules) Annotations(t testing.TB, alert string, labels map[string]string, value string) map[string]string {
	t.Helper()
	tmpl, ok := r.annotations[alert]
	if !ok {
		t.Fatalf("no alert %s in %s", alert, r.Path)
	}
	out := map[string]string{}
	for k, v := range tmpl {
		for l, lv := range labels {
			v = strings.ReplaceAll(v, "{{ $labels."+l+" }}", lv)
		}
		v = strings.ReplaceAll(v, "{{ $value | humanizeDuration }}", value)
		v = strings.ReplaceAll(v, "{{ $value }}", value)
		if strings.Contains(v, "{{") {
			t.Fatalf("%s: alert %s, annotation %s: a template promrules cannot expand with labels %v: %q", r.Path, alert, k, labels, v)
		}
		out[k] = v
	}
	return out
}

// Alert is one alert promtool test rules expects to be firing, with all
// its labels (the series', then the rule's) and expanded annotations.
type Alert struct {
	Labels      map[string]string `yaml:"exp_labels"`
	Annotations map[string]string `yaml:"exp_annotations"`
}

// AlertTest expects exactly ExpAlerts of the alert named Alertname at
// EvalTime (a duration from the start of the series, "2h"). An empty,
// non-nil ExpAlerts asserts the alert does not fire.
type AlertTest struct {
	EvalTime  string  `yaml:"eval_time"`
	Alertname string  `yaml:"alertname"`
	ExpAlerts []Alert `yaml:"exp_alerts"`
}

// Series is one input series: a selector and promtool's expanding
// notation for its values ("1x150", "0+60x150").
type Series struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

// Test is one of promtool's test groups: input series one Interval
// apart, and the alerts expected over them.
type Test struct {
	Interval string      `yaml:"interval"`
	Input    []Series    `yaml:"input_series"`
	Alerts   []AlertTest `yaml:"alert_rule_test"`
}

// Run writes tests to a promtool unit-test file over the rules and runs
// promtool test rules on it, reporting a failure (promtool's output names
// each alert that differs) with t.Errorf.
func (r *Rules) Run(t testing.TB, tests []Test) {
	t.Helper()
	doc, err := yaml.Marshal(map[string]any{"rule_files": []string{r.Path},
		"evaluation_interval": EvaluationInterval, "tests": tests})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "rules_test.yml")
	if err := os.WriteFile(p, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := run(r.promtool, "test", "rules", p); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// WithInstance adds the instance label a scrape would add to a series
// selector as the exporter writes it (name or name{labels}).
func WithInstance(sel, instance string) string {
	if open, ok := strings.CutSuffix(sel, "}"); ok {
		return open + `,instance="` + instance + `"}`
	}
	return sel + `{instance="` + instance + `"}`
}
