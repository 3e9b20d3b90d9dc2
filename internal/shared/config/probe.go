package config

import (
	"fmt"
	"slices"
	"time"
)

// DefaultProbeChecks are the checks `guestcheck probe` counts when the
// probe section does not list any: local, quick checks with no network
// probe and no wait. dns sends queries, routes and network-identity read
// netlink, and qemu-guest-agent and fs-freeze judge snapshot readiness,
// which the boot run covers.
var DefaultProbeChecks = []string{"cloud-init", "hostname", "fstab", "disk-size"}

// DefaultProbeTimeout bounds a probe run: half of KubeVirt's default
// timeoutSeconds (1), leaving the rest to process start-up and
// virt-probe's 100 ms polling of guest-exec-status.
const DefaultProbeTimeout = 500 * time.Millisecond

// noProbeChecks cannot count towards a probe: they make network probes.
var noProbeChecks = map[string]string{
	"dns": "it sends queries to the nameservers, and a probe makes no network probes",
}

// ProbeConfig configures `guestcheck probe`, the command a platform's exec
// readiness or liveness probe runs (KubeVirt's readinessProbe.exec).
//
// The section's presence is also a declaration: with a probe: key in the
// file (even an empty one), the platform is taken to run exec probes
// through the guest agent, and the qemu-guest-agent check fails when the
// agent's RPC filter blocks guest-exec.
type ProbeConfig struct {
	// Checks are the IDs whose verdict counts; default DefaultProbeChecks.
	Checks []string `yaml:"checks"`
	// Timeout bounds the whole probe; default DefaultProbeTimeout. Each
	// check's own deadline is capped by it.
	Timeout time.Duration `yaml:"timeout"`
	// WarnNotReady turns a warning into "not ready" as well; by default
	// only fail and error (and cloud-init still on its way) are.
	WarnNotReady bool `yaml:"warn_not_ready"`

	// Declared is true when the file has a probe: section.
	Declared bool `yaml:"-"`

	file  string // the configuration file's name, for errors
	line  int    // the line of the probe: key
	lines []int  // the line of each entry of Checks
}

// Where returns "file:line" of the i-th entry of Checks (of the section
// when the entry is not from the file), for error messages.
func (p *ProbeConfig) Where(i int) string {
	l := p.line
	if i >= 0 && i < len(p.lines) && p.lines[i] > 0 {
		l = p.lines[i]
	}
	if p.file == "" {
		return "probe"
	}
	if l == 0 {
		return p.file
	}
	return fmt.Sprintf("%s:%d", p.file, l)
}

// probeDefaults fills in what the probe section left unset, after its
// Issues were judged: probe.timeout: 0s and an absent list mean the
// defaults.
func (c *Config) probeDefaults() {
	p := &c.Probe
	if p.Timeout == 0 {
		p.Timeout = DefaultProbeTimeout
	}
	if len(p.Checks) == 0 {
		p.Checks = slices.Clone(DefaultProbeChecks)
		p.lines = nil
	}
}

// ProbeTimeoutFor is the deadline of check id inside a probe: its usual
// deadline, capped by the probe's.
func (c *Config) ProbeTimeoutFor(id string) time.Duration {
	return min(c.CheckTimeoutFor(id), c.Probe.Timeout)
}
