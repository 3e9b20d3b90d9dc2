package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
		{"timeout: 1m\ntimout: 2m\n", "bad.yaml:2: timout: unknown key; did you mean timeout?"},
		{"hostname:\n  expect: x\n", "bad.yaml:2: hostname.expect: unknown key; did you mean expected? (known here: expected)"},
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
		"probe:\n", "probe: {checks: [fstab, hostname], timeout: 200ms}\n", "probe:\n  checks:\n    - dns\n",
		"waivers:\n  - {check: a, code: b, reason: c, expires: 2027-03-01}\n", "w: &w {check: a}\nwaivers: [*w, *w]\n",
		"ssh:\n  baseline: {permit_root_login: [no, yes]}\n", "checks:\n\tdns: {}\n"} {
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
		{"ssh:\n  baseline:\n    password_authentication: maybe\n", `bad.yaml:3: ssh.baseline.password_authentication: "maybe" is not one of yes, no`},
		{"ssh:\n  baseline:\n    permit_root_login:\n      - no\n      - sometimes\n", `bad.yaml:5: ssh.baseline.permit_root_login: "sometimes" is not one of`},
		{"ssh:\n  baseline:\n    permit_root_login: []\n", "bad.yaml:3: ssh.baseline.permit_root_login: empty list"},
		{"ssh:\n  baseline:\n    password_authentication: {a: b}\n", "bad.yaml:3: ssh.baseline.password_authentication: want a value or a list"},
		{"ssh:\n  baseline:\n    passwordauthentication: no\n", "bad.yaml:3: ssh.baseline.passwordauthentication: unknown key; did you mean password_authentication?"},
		{"systemd:\n  boot_budget: -5s\n", "bad.yaml:2: systemd.boot_budget: must be more than 0"},
		{"time_sync:\n  max_offset: 0s\n", "bad.yaml:2: time_sync.max_offset: must be more than 0"},
		{"time_sync:\n  max_ofset: 1s\n", "bad.yaml:2: time_sync.max_ofset: unknown key; did you mean max_offset?"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error = %v, want one line containing %q", tc.in, err, tc.want)
		}
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

// TestWhere: every key path the file holds, as the user wrote it, has
// its line; the built-in default and a path not in the file say so.
func TestWhere(t *testing.T) {
	c, err := Parse("g.yaml", []byte("timeout: 1m\nchecks:\n  dns:\n    enabled: false\nprobe:\n  checks:\n    - fstab\nwaivers:\n  - check: time-sync\n    code: x\n    reason: y\n"))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"timeout": "g.yaml:1", "checks.dns": "g.yaml:3", "checks.dns.enabled": "g.yaml:4",
		"probe.checks[0]": "g.yaml:7", "waivers[0]": "g.yaml:9", "waivers[0].code": "g.yaml:10", "dns": "g.yaml"} {
		if got := c.Where(path); got != want {
			t.Errorf("Where(%q) = %q, want %q", path, got, want)
		}
	}
	if got := Default().Where("checks.dns"); got != "configuration" {
		t.Errorf("Default().Where = %q", got)
	}
	if w := c.Waivers[0]; w.Where() != "g.yaml:9" || w.Path != "waivers[0]" || w.Expired(time.Now()) {
		t.Errorf("waiver %+v at %s", w, w.Where())
	}
}
