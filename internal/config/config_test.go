package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

func TestParseGood(t *testing.T) {
	c, err := Parse("g.yaml", []byte(`
timeout: 2m
check_timeout: 3s
checks:
  hostname:
    enabled: false
  cloud-init:
    timeout: 20s
hostname:
  expected: web-1.example.org
cloud_init:
  required: true
`))
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
	if c.Hostname.Expected != "web-1.example.org" || !c.CloudInit.Required {
		t.Errorf("sections %+v %+v", c.Hostname, c.CloudInit)
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
		{"timeout: 1m\ntimout: 2m\n", "bad.yaml:2: field timout not found"},
		{"hostname:\n  expect: x\n", "bad.yaml:2: field expect not found"},
		{"check_timeout: soon\n", "bad.yaml:1:"},
		{"checks: [1, 2]\n", "bad.yaml:1:"},
		{"timeout: [\n", "bad.yaml:"},
		{"timeout: -1s\n", "timeout must be positive"},
		{"checks:\n  dns:\n    timeout: -2s\n", "checks.dns.timeout must not be negative"},
		{"timeout: 1m\n---\ntimeout: 2m\n", "more than one YAML document"},
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

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.yaml")
	if c, err := Load(missing, false); err != nil || c.Timeout != DefaultTimeout {
		t.Errorf("missing default file: %v, %v", c, err)
	}
	if _, err := Load(missing, true); err == nil {
		t.Error("missing explicit file accepted")
	}
	p := filepath.Join(dir, "g.yaml")
	if err := os.WriteFile(p, []byte("bogus: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p, false); err == nil || !strings.HasPrefix(err.Error(), p+":1:") {
		t.Errorf("Load(bad) = %v, want an error starting with %s:1:", err, p)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "timeout: 1m\n", "checks:\n  dns: {enabled: false, timeout: 3s}\n",
		"hostname: {expected: a}\ncloud_init: {required: yes}\n", "timeout: [\n", "a: &x 1\nb: *x\n",
		"probe:\n", "probe: {checks: [fstab, hostname], timeout: 200ms}\n", "probe:\n  checks:\n    - dns\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse("fuzz.yaml", b)
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
	})
}

func TestParseNewSections(t *testing.T) {
	c, err := Parse("n.yaml", []byte(`
ssh:
  baseline:
    password_authentication: yes
    permit_root_login: [no, prohibit-password]
    pubkey_authentication: true
systemd:
  boot_budget: 20s
time_sync:
  max_offset: 250ms
`))
	if err != nil {
		t.Fatal(err)
	}
	b := c.SSH.Baseline
	if strings.Join(b.PasswordAuthentication, ",") != "yes" || strings.Join(b.PermitRootLogin, ",") != "no,prohibit-password" ||
		strings.Join(b.PubkeyAuthentication, ",") != "yes" || b.KbdInteractiveAuthentication != nil || b.PermitEmptyPasswords != nil {
		t.Errorf("ssh.baseline = %+v", b)
	}
	if c.Systemd.BootBudget != 20*time.Second || c.TimeSync.MaxOffset != 250*time.Millisecond {
		t.Errorf("systemd %+v time_sync %+v", c.Systemd, c.TimeSync)
	}
	d := Default()
	if d.Systemd.BootBudget != 60*time.Second || d.TimeSync.MaxOffset != time.Second || d.SSH.Baseline.PasswordAuthentication != nil {
		t.Errorf("defaults: %+v %+v %+v", d.Systemd, d.TimeSync, d.SSH)
	}
}

func TestParseNewSectionErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ssh:\n  baseline:\n    password_authentication: maybe\n", `bad.yaml:3: "maybe" is not one of yes, no`},
		{"ssh:\n  baseline:\n    permit_root_login:\n      - no\n      - sometimes\n", `bad.yaml:5: "sometimes" is not one of`},
		{"ssh:\n  baseline:\n    permit_root_login: []\n", "bad.yaml:3: empty list"},
		{"ssh:\n  baseline:\n    password_authentication: {a: b}\n", "bad.yaml:3: want a value or a list"},
		{"ssh:\n  baseline:\n    passwordauthentication: no\n", "bad.yaml:3: field passwordauthentication not found"},
		{"systemd:\n  boot_budget: -5s\n", "bad.yaml:2: systemd.boot_budget must be positive"},
		{"time_sync:\n  max_offset: 0s\n", "bad.yaml:2: time_sync.max_offset must be positive"},
		{"time_sync:\n  max_ofset: 1s\n", "bad.yaml:2: field max_ofset not found"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error = %v, want one line containing %q", tc.in, err, tc.want)
		}
	}
}

// TestYAMLErrorOneLine: yaml.v3's messages become "file:line: reason" on
// one line, whatever newlines a value carried into them.
func TestYAMLErrorOneLine(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New("yaml: line 3: did not find\n  expected key"), "f.yaml:3: did not find expected key"},
		{errors.New("yaml: no line\there"), "f.yaml: no line here"},
		{&yaml.TypeError{Errors: []string{"line 2: cannot unmarshal `a\nb`", "field x not found"}},
			"f.yaml:2: cannot unmarshal `a b`; f.yaml: field x not found"},
	} {
		if got := yamlError("f.yaml", tc.err).Error(); got != tc.want {
			t.Errorf("yamlError(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
