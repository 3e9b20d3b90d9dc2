// Package config reads guestcheck's YAML configuration file. Decoding is
// strict: an unknown key is an error that names the file and line, so a
// typo never silently disables an expectation.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/guestcheck/guestcheck/internal/guestfile/problem"
)

// DefaultPath is read when --config is not given; its absence is fine.
const DefaultPath = "/etc/guestcheck/guestcheck.yaml"

// Defaults applied when the file leaves a value unset.
const (
	DefaultTimeout      = 60 * time.Second
	DefaultCheckTimeout = 5 * time.Second
	// DefaultBootBudget is the systemd check's userspace boot budget:
	// Debian guests under TCG (no KVM) take about a minute.
	DefaultBootBudget = 60 * time.Second
	// DefaultMaxOffset is the time-sync check's bound on the clock error:
	// a disciplined clock is within milliseconds, and one second is far
	// inside Kerberos' five-minute tolerance.
	DefaultMaxOffset = time.Second
)

// Config is the whole file. Later areas add their own sections.
type Config struct {
	// source is the file the configuration came from and its bytes, for
	// Where; empty for the built-in default.
	source     string
	sourceText []byte

	// Timeout bounds the whole run.
	Timeout time.Duration `yaml:"timeout"`
	// CheckTimeout is the default deadline of each check.
	CheckTimeout time.Duration `yaml:"check_timeout"`
	// Checks holds per-check switches and deadlines, keyed by check ID.
	Checks map[string]CheckConfig `yaml:"checks"`
	// Hostname holds expectations for the hostname check.
	Hostname HostnameConfig `yaml:"hostname"`
	// CloudInit holds expectations for the cloud-init check.
	CloudInit CloudInitConfig `yaml:"cloud_init"`
	// Routes holds expectations for the routes check.
	Routes RoutesConfig `yaml:"routes"`
	// DNS holds the dns check's probe settings.
	DNS DNSConfig `yaml:"dns"`
	// Disk holds thresholds for the disk checks.
	Disk DiskConfig `yaml:"disk"`
	// SSH holds the ssh check's authentication baseline.
	SSH SSHConfig `yaml:"ssh"`
	// Systemd holds the systemd check's boot budget.
	Systemd SystemdConfig `yaml:"systemd"`
	// TimeSync holds the time-sync check's clock bound.
	TimeSync TimeSyncConfig `yaml:"time_sync"`
	// Probe configures `guestcheck probe`; its presence declares that the
	// platform runs exec probes (see ProbeConfig).
	Probe ProbeConfig `yaml:"probe"`
}

// SSHConfig holds expectations for the ssh check.
type SSHConfig struct {
	// Baseline lists, per authentication setting, the values sshd may
	// have; an unset setting keeps the default baseline.
	Baseline SSHBaseline `yaml:"baseline"`
}

// SSHBaseline is the accepted values of sshd's authentication settings.
// nil keeps the default: no password or keyboard-interactive login, root
// only with keys (or not at all), no empty passwords, keys allowed.
// cloud-init's ssh_pwauth, when the instance sets it, decides
// PasswordAuthentication over this.
type SSHBaseline struct {
	PasswordAuthentication       YesNo     `yaml:"password_authentication"`
	KbdInteractiveAuthentication YesNo     `yaml:"kbd_interactive_authentication"`
	PermitRootLogin              RootLogin `yaml:"permit_root_login"`
	PermitEmptyPasswords         YesNo     `yaml:"permit_empty_passwords"`
	PubkeyAuthentication         YesNo     `yaml:"pubkey_authentication"`
}

// YesNo is a list of accepted values of a yes/no sshd setting.
type YesNo []string

// UnmarshalYAML accepts a value or a list of "yes"/"no" (YAML booleans
// too), and names the line of anything else.
func (v *YesNo) UnmarshalYAML(n *yaml.Node) error {
	s, err := sshValues(n, "yes", "no")
	*v = s
	return err
}

// RootLogin is a list of accepted PermitRootLogin values.
type RootLogin []string

// UnmarshalYAML accepts PermitRootLogin's values and names the line of
// anything else.
func (v *RootLogin) UnmarshalYAML(n *yaml.Node) error {
	s, err := sshValues(n, "yes", "no", "prohibit-password", "without-password", "forced-commands-only")
	*v = s
	return err
}

func sshValues(n *yaml.Node, valid ...string) ([]string, error) {
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	default:
		return nil, fmt.Errorf("line %d: want a value or a list of %s", n.Line, strings.Join(valid, ", "))
	}
	out := []string{}
	for _, it := range items {
		v := strings.ToLower(it.Value)
		switch {
		case it.Kind == yaml.ScalarNode && it.Tag == "!!bool":
			// YAML 1.1 writers (and humans) put yes/no unquoted.
			if v == "true" || v == "yes" || v == "on" {
				v = "yes"
			} else {
				v = "no"
			}
		case it.Kind != yaml.ScalarNode:
			return nil, fmt.Errorf("line %d: want one of %s", it.Line, strings.Join(valid, ", "))
		}
		if !slices.Contains(valid, v) {
			return nil, fmt.Errorf("line %d: %q is not one of %s", it.Line, it.Value, strings.Join(valid, ", "))
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("line %d: empty list: name at least one accepted value", n.Line)
	}
	return out, nil
}

// SystemdConfig holds the systemd check's expectations.
type SystemdConfig struct {
	// BootBudget bounds userspace start-up: from systemd's start to the
	// end of the boot transaction and to cloud-final, the guest agent and
	// sshd becoming active (default 60s; TCG guests need about that).
	BootBudget time.Duration `yaml:"boot_budget"`
}

// TimeSyncConfig holds the time-sync check's expectations.
type TimeSyncConfig struct {
	// MaxOffset is how far the kernel's own estimate of the clock error
	// may go before the check fails (default 1s).
	MaxOffset time.Duration `yaml:"max_offset"`
}

// RoutesConfig says which interface must carry the default route.
type RoutesConfig struct {
	// DefaultInterface is the interface name or MAC address that must hold
	// the winning default route; empty means "the interface holding the
	// first NIC's address".
	DefaultInterface string `yaml:"default_interface"`
	// Targets are extra addresses to report the kernel's route to.
	Targets []string `yaml:"targets"`
}

// DNSConfig tunes the nameserver probes.
type DNSConfig struct {
	// Names to resolve through every nameserver; default: the machine's
	// FQDN when it has a domain.
	Names []string `yaml:"names"`
	// Timeout bounds each nameserver's whole probe, all names and attempts
	// included (default 2s), so a black-hole server costs exactly this.
	Timeout time.Duration `yaml:"timeout"`
	// Retries are further attempts after a timed-out one (default 1); the
	// attempts share Timeout equally.
	Retries *int `yaml:"retries"`
}

// DiskConfig holds usage thresholds in percent.
type DiskConfig struct {
	// WarnPercent and FailPercent bound block and inode usage (defaults 90 and 97).
	WarnPercent int `yaml:"warn_percent"`
	FailPercent int `yaml:"fail_percent"`
}

// CheckConfig switches one check on or off and sets its deadline.
type CheckConfig struct {
	// Enabled defaults to true; false removes the check from default runs
	// (--only still runs it).
	Enabled *bool `yaml:"enabled"`
	// Timeout overrides check_timeout for this check.
	Timeout time.Duration `yaml:"timeout"`
}

// HostnameConfig holds what the operator expects the hostname to be.
type HostnameConfig struct {
	// Expected is the hostname (short or fully qualified) the guest must
	// have; it takes precedence over what cloud-init was asked to set.
	Expected string `yaml:"expected"`
}

// CloudInitConfig holds cloud-init expectations.
type CloudInitConfig struct {
	// Required turns "cloud-init is not installed" or "disabled" into a
	// failure instead of a skip, for images that must be provisioned by it.
	Required bool `yaml:"required"`
}

// Default returns the configuration used when no file exists.
func Default() *Config {
	return &Config{Timeout: DefaultTimeout, CheckTimeout: DefaultCheckTimeout,
		DNS:      DNSConfig{Timeout: 2 * time.Second},
		Disk:     DiskConfig{WarnPercent: 90, FailPercent: 97},
		Systemd:  SystemdConfig{BootBudget: DefaultBootBudget},
		TimeSync: TimeSyncConfig{MaxOffset: DefaultMaxOffset},
		Probe:    ProbeConfig{Checks: slices.Clone(DefaultProbeChecks), Timeout: DefaultProbeTimeout}}
}

// Load reads path. A missing file at the default path yields Default(); a
// missing explicitly named file is an error.
func Load(path string, explicit bool) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if !explicit && errors.Is(err, iofs.ErrNotExist) {
			return Default(), nil
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return Parse(path, b)
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)^line (\d+): (.*)$`) })

// Parse decodes a configuration file's bytes strictly and validates it.
// name is used in error messages, which are one line: "name:LINE: reason".
func Parse(name string, b []byte) (*Config, error) {
	c := Default()
	c.source, c.sourceText = name, b
	if !commentOnly(b) {
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
			return nil, yamlError(name, err)
		}
		// A second document would be silently ignored; refuse it.
		var extra any
		if err := dec.Decode(&extra); err == nil {
			return nil, fmt.Errorf("%s: more than one YAML document", name)
		}
	}
	if c.Timeout <= 0 {
		return nil, fmt.Errorf("%s: timeout must be positive, got %s", name, c.Timeout)
	}
	if c.CheckTimeout <= 0 {
		return nil, fmt.Errorf("%s: check_timeout must be positive, got %s", name, c.CheckTimeout)
	}
	if c.DNS.Timeout < 0 || (c.DNS.Retries != nil && *c.DNS.Retries < 0) {
		return nil, fmt.Errorf("%s: dns.timeout and dns.retries must not be negative", name)
	}
	if c.Disk.WarnPercent < 0 || c.Disk.WarnPercent > 100 || c.Disk.FailPercent < 0 || c.Disk.FailPercent > 100 {
		return nil, fmt.Errorf("%s: disk.warn_percent and disk.fail_percent must be between 0 and 100", name)
	}
	if c.Systemd.BootBudget <= 0 {
		return nil, problem.At(name, keyLine(b, "boot_budget"), "systemd.boot_budget must be positive, got %s", c.Systemd.BootBudget)
	}
	if c.TimeSync.MaxOffset <= 0 {
		return nil, problem.At(name, keyLine(b, "max_offset"), "time_sync.max_offset must be positive, got %s", c.TimeSync.MaxOffset)
	}
	for id, cc := range c.Checks {
		if cc.Timeout < 0 {
			return nil, fmt.Errorf("%s: checks.%s.timeout must not be negative", name, id)
		}
	}
	if err := c.finishProbe(name, b); err != nil {
		return nil, err
	}
	return c, nil
}

// commentOnly reports whether b holds, for YAML, no document at all: every
// line empty or spaces then a comment, in printable ASCII (tabs inside
// comments). The shipped configuration is such a file, and the decoder
// took longer to scan its comments than the rest of an exec probe's
// start under emulation. Anything else (a tab or BOM before "#", other
// bytes) goes to the decoder, which then says the same or finds fault.
func commentOnly(b []byte) bool {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		t := bytes.TrimLeft(line, " ")
		if len(t) > 0 && t[0] != '#' {
			return false
		}
		for _, c := range t {
			if c != '\t' && (c < 0x20 || c > 0x7e) {
				return false
			}
		}
	}
	return true
}

// keyLine is the line of the first "key:" in b, for validation errors
// that yaml does not locate; 0 when not found.
func keyLine(b []byte, key string) int {
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+":") {
			return i + 1
		}
	}
	return 0
}

// yamlError flattens yaml.v3's multi-line errors into "name:LINE: reason",
// each reason folded to one line (YAML values carry newlines into them).
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		parts := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			parts = append(parts, yamlProblem(name, e).String())
		}
		return errors.New(strings.Join(parts, "; "))
	}
	return yamlProblem(name, strings.TrimPrefix(err.Error(), "yaml: "))
}

// yamlProblem is one yaml.v3 message, "line N: reason" or a bare reason,
// as a problem in file name.
func yamlProblem(name, msg string) problem.Problem {
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return problem.Problem{File: name, Line: n, Msg: m[2]}
		}
	}
	return problem.Problem{File: name, Msg: msg}
}

// Where locates a dotted key path ("checks.dsn") in the file the
// configuration came from, as "file:line" ("file" when the line is not
// known, "configuration" for the built-in default), for messages about a
// value that only a later stage can judge.
func (c *Config) Where(keyPath string) string {
	if c.source == "" {
		return "configuration"
	}
	if n := pathLine(c.sourceText, strings.Split(keyPath, ".")); n > 0 {
		return fmt.Sprintf("%s:%d", c.source, n)
	}
	return c.source
}

// pathLine finds the line of a nested block-style key path: each segment
// a "key:" indented deeper than its parent's; 0 when not found.
func pathLine(b []byte, segs []string) int {
	indent, seg := -1, 0
	for i, l := range strings.Split(string(b), "\n") {
		t := strings.TrimLeft(l, " ")
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		in := len(l) - len(t)
		if in <= indent {
			return 0 // left the parent's block without finding the key
		}
		if strings.HasPrefix(t, segs[seg]+":") {
			if seg == len(segs)-1 {
				return i + 1
			}
			indent, seg = in, seg+1
		}
	}
	return 0
}

// CheckEnabled reports whether check id runs by default.
func (c *Config) CheckEnabled(id string) bool {
	cc, ok := c.Checks[id]
	return !ok || cc.Enabled == nil || *cc.Enabled
}

// CheckTimeoutFor returns the deadline of check id.
func (c *Config) CheckTimeoutFor(id string) time.Duration {
	if cc, ok := c.Checks[id]; ok && cc.Timeout > 0 {
		return cc.Timeout
	}
	return c.CheckTimeout
}
