package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestProbeDefaults(t *testing.T) {
	for _, in := range []string{"", "timeout: 1m\n"} {
		c, err := Parse("p.yaml", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if c.Probe.Declared {
			t.Errorf("Parse(%q): probe declared without a probe: key", in)
		}
		if !slices.Equal(c.Probe.Checks, DefaultProbeChecks) || c.Probe.Timeout != DefaultProbeTimeout || c.Probe.WarnNotReady {
			t.Errorf("Parse(%q): probe %+v, want the defaults", in, c.Probe)
		}
	}
	if d := Default(); d.Probe.Declared || !slices.Equal(d.Probe.Checks, DefaultProbeChecks) || d.Probe.Timeout != DefaultProbeTimeout {
		t.Errorf("Default().Probe = %+v", d.Probe)
	}
}

func TestProbeDeclared(t *testing.T) {
	for _, in := range []string{"probe:\n", "probe: {}\n", "probe:\n  timeout: 300ms\n", "timeout: 1m\nprobe: {warn_not_ready: true}\n"} {
		c, err := Parse("p.yaml", []byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if !c.Probe.Declared {
			t.Errorf("Parse(%q): probe section not seen", in)
		}
		if !slices.Equal(c.Probe.Checks, DefaultProbeChecks) {
			t.Errorf("Parse(%q): checks %v, want the defaults", in, c.Probe.Checks)
		}
	}
	c, err := Parse("p.yaml", []byte("timeout: 1m\nprobe:\n  timeout: 300ms\n  warn_not_ready: true\n  checks:\n    - fstab\n    - cloud-init\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Probe
	if !slices.Equal(p.Checks, []string{"fstab", "cloud-init"}) || p.Timeout != 300*time.Millisecond || !p.WarnNotReady {
		t.Errorf("probe %+v", p)
	}
	if p.Where(0) != "p.yaml:6" || p.Where(1) != "p.yaml:7" || p.Where(-1) != "p.yaml:2" {
		t.Errorf("Where: %s %s %s", p.Where(0), p.Where(1), p.Where(-1))
	}
	// The probe caps each check's own deadline.
	if c.ProbeTimeoutFor("fstab") != 300*time.Millisecond {
		t.Errorf("ProbeTimeoutFor = %v", c.ProbeTimeoutFor("fstab"))
	}
	c, _ = Parse("p.yaml", []byte("checks:\n  fstab: {timeout: 100ms}\nprobe: {}\n"))
	if c.ProbeTimeoutFor("fstab") != 100*time.Millisecond || c.ProbeTimeoutFor("hostname") != DefaultProbeTimeout {
		t.Errorf("ProbeTimeoutFor = %v %v", c.ProbeTimeoutFor("fstab"), c.ProbeTimeoutFor("hostname"))
	}
}

func TestProbeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"probe:\n  timeout: -1s\n", "p.yaml:2: probe.timeout: must not be negative"},
		{"probe:\n  checks: []\n", "p.yaml:2: probe.checks: empty list"},
		{"probe:\n  checks:\n    - fstab\n    - dns\n", "p.yaml:4: probe.checks: dns cannot count towards a probe"},
		{"probe:\n  checks: [fstab, hostname, fstab]\n", "p.yaml:2: probe.checks: fstab is listed twice"},
		{"probe:\n  chekcs: [fstab]\n", "p.yaml:2: probe.chekcs: unknown key; did you mean checks?"},
		{"probe:\n  timeout: soon\n", "p.yaml:2:"},
		{"probe: [fstab]\n", "p.yaml:1:"},
	} {
		_, err := Parse("p.yaml", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): multi-line error %q", tc.in, err)
		}
	}
}
