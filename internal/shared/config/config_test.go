package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// sample is a check's section as a check declares it, with a key of each
// kind and a rule across two of them.
type sample struct {
	Wait        time.Duration
	Strict      bool
	Retries     int
	Low, High   int
	Name        string
	Names       []string
	Modes       []string
	InnerBudget time.Duration
}

var sampleSettings = Settings[sample]{
	Name:    "sample",
	Help:    "A check's settings.",
	Default: func() sample { return sample{Wait: 2 * time.Second, Low: 10, High: 20} },
	Keys: []Field[sample]{
		Duration("wait", "2s", "How long.", true, func(s *sample, v time.Duration) { s.Wait = v }),
		Bool("strict", "false", "Whether.", func(s *sample, v bool) { s.Strict = v }),
		Count("retries", "0", "How often.", func(s *sample, v int) { s.Retries = v }),
		Percent("low", "10", "Low mark.", func(s *sample, v int) { s.Low = v }),
		Percent("high", "20", "High mark.", func(s *sample, v int) { s.High = v }),
		Text("name", "name", "", "A name.", func(s *sample, v string) { s.Name = v }).WithExample("web-1"),
		List("names", "list of names", "", "Names.", func(s *sample, v []string) { s.Names = v }).WithExample("[a, b]"),
		Group[sample]("inner", "A group of keys."),
		OneOf("inner.modes", "no", "Modes.", []string{"yes", "no", "maybe"}, func(s *sample, v []string) { s.Modes = v }),
		Duration("inner.budget", "0s", "Budget.", false, func(s *sample, v time.Duration) { s.InnerBudget = v }),
	},
	Issues: func(s sample) []Issue {
		if s.Low > s.High {
			return []Issue{{Path: "low", Msg: "above high", OrElse: &Issue{Path: "high", Msg: "below low"}}}
		}
		return nil
	},
}

func TestParseGood(t *testing.T) {
	c, err := Parse("g.yaml", []byte(`
timeout: 2m
check_timeout: 3s
checks:
  hostname:
    enabled: false
  cloud-init:
    timeout: 20s
sample:
  wait: 5s
  strict: yes
  retries: 3
  name: web-1
  names: [a, b]
  inner:
    modes: [yes, maybe]
    budget: 1m
`), sampleSettings.Section())
	if err != nil {
		t.Fatal(err)
	}
	if c.Timeout != 2*time.Minute || c.CheckTimeout != 3*time.Second {
		t.Errorf("timeouts %v %v", c.Timeout, c.CheckTimeout)
	}
	if c.CheckEnabled("hostname") || !c.CheckEnabled("cloud-init") || !c.CheckEnabled("other") {
		t.Error("CheckEnabled")
	}
	if c.CheckTimeoutFor("cloud-init") != 20*time.Second || c.CheckTimeoutFor("hostname") != 3*time.Second {
		t.Error("CheckTimeoutFor")
	}
	want := sample{Wait: 5 * time.Second, Strict: true, Retries: 3, Low: 10, High: 20, Name: "web-1",
		Names: []string{"a", "b"}, Modes: []string{"yes", "maybe"}, InnerBudget: time.Minute}
	if got := sampleSettings.Of(c); !reflect.DeepEqual(got, want) {
		t.Errorf("sample = %+v, want %+v", got, want)
	}
	if got := sampleSettings.Of(Default()); !reflect.DeepEqual(got, sampleSettings.Default()) {
		t.Errorf("an absent section = %+v, want its defaults", got)
	}
	if got := sampleSettings.Of(nil); got.Wait != 2*time.Second {
		t.Errorf("no configuration: %+v, want the defaults", got)
	}
}

func TestParseEmptyIsDefault(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n", "---\n"} {
		c, err := Parse("e.yaml", []byte(in))
		if err != nil || c.Timeout != DefaultTimeout || c.CheckTimeout != DefaultCheckTimeout {
			t.Errorf("Parse(%q) = %+v, %v", in, c, err)
		}
	}
}

func TestParseErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"timeout: 1m\ntimout: 2m\n", "bad.yaml:2: timout: unknown key; did you mean timeout?"},
		{"check_timeout: soon\n", "bad.yaml:1:"},
		{"checks: [1, 2]\n", "bad.yaml:1:"},
		{"timeout: [\n", "bad.yaml:"},
		{"timeout: -1s\n", "bad.yaml:1: timeout: must be more than 0, got -1s"},
		{"checks:\n  dns:\n    timeout: -2s\n", "bad.yaml:3: checks.dns.timeout: must not be negative, got -2s"},
		{"timeout: 1m\n---\ntimeout: 2m\n", "bad.yaml:3: a second YAML document (after ---)"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error is not one line: %q", tc.in, err)
		}
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.yaml")
	if c, err := Inspect(missing, false); err != nil || c.Timeout != DefaultTimeout {
		t.Errorf("missing default file: %v, %v", c, err)
	}
	if _, err := Inspect(missing, true); err == nil {
		t.Error("missing explicit file accepted")
	}
	p := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(p, []byte("bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Inspect(p, false); err == nil || !strings.HasPrefix(err.Error(), p+":1:") {
		t.Errorf("Inspect(bad) = %v, want an error starting with %s:1:", err, p)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "timeout: 1m\n", "checks:\n  dns: {enabled: false, timeout: 3s}\n",
		"hostname: {expected: a}\ncloud_init: {required: yes}\n", "timeout: [\n", "a: &x 1\nb: *x\n",
		"probe:\n", "probe: {checks: [fstab, hostname], timeout: 200ms}\n", "probe:\n  checks:\n    - dns\n",
		"waivers:\n  - {check: a, code: b, reason: c, expires: 2027-03-01}\n", "w: &w {check: a}\nwaivers: [*w, *w]\n",
		"sample:\n  inner: {modes: [no, yes]}\n", "checks:\n\tdns: {}\n", "sample: {low: 90, names: [x]}\n"} {
		f.Add([]byte(s))
	}
	sec := sampleSettings.Section()
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.yaml", b, sec)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if c.Timeout <= 0 || c.CheckTimeout <= 0 || c.Probe.Timeout <= 0 {
			t.Fatalf("accepted non-positive timeouts %+v", c)
		}
		if len(c.Probe.Checks) == 0 || slices.Contains(c.Probe.Checks, "dns") {
			t.Fatalf("accepted probe checks %q", c.Probe.Checks)
		}
		if s := sampleSettings.Of(c); s.Wait <= 0 || s.Low > s.High || s.Retries < 0 {
			t.Fatalf("accepted a sample its rules refuse: %+v", s)
		}
	})
}

// TestSectionErrors: a check's section is decoded as strictly as the
// general keys, its rules judged, and a file naming a section no check
// declares is refused.
func TestSectionErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"sample:\n  inner:\n    modes: sometimes\n", `bad.yaml:3: sample.inner.modes: "sometimes" is not one of yes, no, maybe`},
		{"sample:\n  inner:\n    modes:\n      - no\n      - [x]\n", `bad.yaml:5: sample.inner.modes: want one of yes, no, maybe, got a list`},
		{"sample:\n  inner:\n    modes: []\n", "bad.yaml:3: sample.inner.modes: empty list"},
		{"sample:\n  inner:\n    mode: no\n", "bad.yaml:3: sample.inner.mode: unknown key; did you mean modes? (known here: modes, budget)"},
		{"sample:\n  wait: 0s\n", "bad.yaml:2: sample.wait: must be more than 0"},
		{"sample:\n  retries: -1\n", `bad.yaml:2: sample.retries: want a whole number, 0 or more, got "-1"`},
		{"sample:\n  low: 101\n", `bad.yaml:2: sample.low: want a number from 0 to 100, got "101"`},
		{"sample:\n  names: a\n", "bad.yaml:2: sample.names: want a list, got one value; write [a]"},
		{"sample:\n  low: 50\n", "bad.yaml:2: sample.low: above high"},
		{"sample:\n  high: 5\n", "bad.yaml:2: sample.high: below low"},
		{"sample: 1\n", "bad.yaml:1: sample: want keys and values, got \"1\" (known here: wait, strict, retries, low, high, name, names, inner)"},
		{"other:\n  x: 1\n", "bad.yaml:1: other: unknown key"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.in), sampleSettings.Section())
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error = %v, want one line containing %q", tc.in, err, tc.want)
		}
	}
	if _, err := Parse("bad.yaml", []byte("sample: {wait: 1s}\n")); err == nil || !strings.Contains(err.Error(), "sample: unknown key") {
		t.Errorf("a section no check declares: %v", err)
	}
}

// TestYAMLProblem: yaml.v3's syntax messages become "file:line: reason"
// on one line, and a tab in the indentation is named as such.
func TestYAMLProblem(t *testing.T) {
	for _, tc := range []struct {
		src, msg, want string
	}{
		{"a: 1\nb: 2\nc: [\n", "line 3: did not find\n  expected key", `f.yaml:3: the list opened with "[" is never closed; close it with "]"`},
		{"a: 1\nb: 2\nc: [1, 2\n", "line 2: did not find expected ',' or ']'", `f.yaml:3: the list opened with "[" is never closed; close it with "]"`},
		{"a: 1\n- b\n", "line 1: did not find expected key", "f.yaml:2: this line does not line up with the keys or list entries above it; indent it as its neighbours are"},
		{"a: x\nb: |\n  [not a list\n  'nor a quote\nc: [\n", "line 5: did not find expected node content", `f.yaml:5: the list opened with "[" is never closed; close it with "]"`},
		{"", "no line\there", "f.yaml: no line here"},
		{"a:\n\tb: 1\n", "line 2: found character that cannot start any token", "f.yaml:2: indented with a tab; YAML indents with spaces only"},
	} {
		if got := yamlProblem("f.yaml", []byte(tc.src), tc.msg).Error(); got != tc.want {
			t.Errorf("yamlProblem(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

// TestLine: every key path the file holds, as the user wrote it, has
// its line, and so has a waiver; a path not in the file has none.
func TestLine(t *testing.T) {
	c, err := Parse("g.yaml", []byte("timeout: 1m\nchecks:\n  dns:\n    enabled: false\nprobe:\n  checks:\n    - fstab\nwaivers:\n  - check: time-sync\n    code: x\n    reason: y\n"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"timeout": 1, "checks.dns": 3, "checks.dns.enabled": 4,
		"probe.checks[0]": 7, "waivers[0]": 9, "waivers[0].code": 10, "dns": 0} {
		if got := c.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	if c.Source() != "g.yaml" || Default().Source() != "" {
		t.Errorf("Source() = %q, and %q for the default", c.Source(), Default().Source())
	}
	if w := c.Waivers[0]; w.Where() != "g.yaml:9" || w.Path != "waivers[0]" || w.Expired(time.Now()) {
		t.Errorf("waiver %+v at %s", w, w.Where())
	}
}
