package config

import (
	"strings"
	"time"
)

// Key is one configuration key, described once. The strict decoder walks
// the file against this table (its "known here" lists come from it), and
// guestcheck.yaml(5) is generated from it, so the page, the messages and
// the decoder cannot drift apart.
type Key struct {
	// Path is the dotted key path; the segment ID stands for any check ID
	// and [] for each entry of a list.
	Path string
	// Type says in words what the value is; empty for a section (a key
	// that holds other keys).
	Type string
	// Default is the value used when the key is absent, as the file would
	// write it; empty when there is none.
	Default string
	// Help is one paragraph for the man page.
	Help string

	decode leafFunc // nil for a section
	enter  leafFunc // a section's hook, run before its keys (may be nil)
}

// The value types, in the user's words.
const (
	typeDuration = "duration (such as 500ms, 5s, 2m or 1h30m)"
	typePercent  = "number from 0 to 100"
	typeCount    = "whole number, 0 or more"
	typeBool     = "true or false"
	typeName     = "name"
	typeNames    = "list of names"
	typeYesNo    = "yes, no, or a list of them"
	typeRoot     = "one of yes, no, prohibit-password, without-password, forced-commands-only, or a list of them"
	typeText     = "text"
	typeDate     = "date (YYYY-MM-DD)"
	typeCheckIDs = "list of check IDs"
)

// Keys lists every configuration key, sections before the keys they hold,
// in the order guestcheck.yaml(5) describes them.
var Keys = []Key{
	{Path: "timeout", Type: typeDuration, Default: "60s",
		Help:   "Bounds the whole run; checks still running then are reported as errors. --timeout overrides it.",
		decode: durationLeaf(true, func(c *Config, _ []string, d time.Duration) { c.Timeout = d })},
	{Path: "check_timeout", Type: typeDuration, Default: DefaultCheckTimeout.String(),
		Help:   "The default deadline of each check; a check that overruns it is reported as an error (check-timeout).",
		decode: durationLeaf(true, func(c *Config, _ []string, d time.Duration) { c.CheckTimeout = d })},
	{Path: "checks",
		Help: "Per-check settings, keyed by check ID (guestcheck --list names them). An unknown ID is an error."},
	{Path: "checks.ID", enter: enterCheck,
		Help: "The settings of the check ID, such as dns: {enabled: false}."},
	{Path: "checks.ID.enabled", Type: typeBool, Default: "true",
		Help: "false removes the check from default runs; --only still runs it.",
		decode: boolLeaf(func(c *Config, at []string, v bool) {
			cc := c.Checks[at[0]]
			cc.Enabled = &v
			c.Checks[at[0]] = cc
		})},
	{Path: "checks.ID.timeout", Type: typeDuration, Default: "check_timeout",
		Help: "This check's deadline, instead of check_timeout.",
		decode: durationLeaf(false, func(c *Config, at []string, d time.Duration) {
			cc := c.Checks[at[0]]
			cc.Timeout = d
			c.Checks[at[0]] = cc
		})},
	{Path: "waivers",
		Help: "Findings the operator accepts: each entry waives one finding code of one check, with a reason and an optional expiry date. A waived finding keeps its status and is still reported, marked as waived with the reason, but it does not count towards the exit code or the check's status. From the expiry date on (00:00 UTC), the waiver no longer applies and the check reports waiver-expired (a warning) until the entry is renewed or removed. Example: {check: time-sync, code: time-sync-clock-unsynced, reason: \"no NTP on the test network\", expires: 2027-03-01}."},
	{Path: "waivers[]", enter: enterWaiver, Help: "One waiver."},
	{Path: "waivers[].check", Type: "check ID", Help: "The check whose finding is waived (required).",
		decode: lastWaiver(func(w *Waiver, s string) { w.Check = s })},
	{Path: "waivers[].code", Type: "finding code", Help: "The finding code waived; it must be one of that check's codes (guestcheck explain CHECK lists them; required).",
		decode: lastWaiver(func(w *Waiver, s string) { w.Code = s })},
	{Path: "waivers[].reason", Type: typeText, Help: "Why the finding is accepted; every report shows it (required).",
		decode: lastWaiver(func(w *Waiver, s string) { w.Reason = s })},
	{Path: "waivers[].expires", Type: typeDate, Default: "never",
		Help: "The day the waiver stops applying, at 00:00 UTC.", decode: expiresLeaf},
	{Path: "hostname", Help: "Expectations of the hostname check."},
	{Path: "hostname.expected", Type: typeName,
		Help:   "The hostname (short or fully qualified) this VM must have; it wins over what cloud-init was asked to set. It must be a valid host name (RFC 1123): letters, digits and '-' in dot-separated labels.",
		decode: stringLeaf(func(c *Config, _ []string, s string) { c.Hostname.Expected = s })},
	{Path: "cloud_init", Help: "Expectations of the cloud-init check."},
	{Path: "cloud_init.required", Type: typeBool, Default: "false",
		Help:   "true turns \"cloud-init is not installed\" or \"disabled\" into a failure instead of a skip, for images that must be provisioned by it.",
		decode: boolLeaf(func(c *Config, _ []string, v bool) { c.CloudInit.Required = v })},
	{Path: "routes", Help: "Expectations of the routes check."},
	{Path: "routes.default_interface", Type: "interface name or MAC address", Default: "the first NIC",
		Help:   "The interface that must carry the winning default route.",
		decode: stringLeaf(func(c *Config, _ []string, s string) { c.Routes.DefaultInterface = s })},
	{Path: "routes.targets", Type: "list of addresses",
		Help:   "Extra IP addresses to report the kernel's route to. Names are refused: resolving them would send traffic.",
		decode: namesLeaf(func(c *Config, v []string, _ []int) { c.Routes.Targets = v })},
	{Path: "dns", Help: "The dns check's nameserver probes."},
	{Path: "dns.names", Type: typeNames, Default: "this machine's FQDN, when it has a domain",
		Help:   "Names to resolve through every nameserver; with none, the probes skip and say so.",
		decode: namesLeaf(func(c *Config, v []string, _ []int) { c.DNS.Names = v })},
	{Path: "dns.timeout", Type: typeDuration, Default: "2s",
		Help:   "Bounds each nameserver's whole probe, all names and attempts included, so that a server that never answers costs exactly this.",
		decode: durationLeaf(false, func(c *Config, _ []string, d time.Duration) { c.DNS.Timeout = d })},
	{Path: "dns.retries", Type: typeCount, Default: "1",
		Help:   "Further attempts after a timed-out one; the attempts share dns.timeout equally.",
		decode: countLeaf(func(c *Config, n int) { c.DNS.Retries = &n })},
	{Path: "disk", Help: "Thresholds of the disk usage checks, in percent of blocks and of inodes."},
	{Path: "disk.warn_percent", Type: typePercent, Default: "90",
		Help:   "Usage above this warns; at most disk.fail_percent.",
		decode: percentLeaf(func(c *Config, n int) { c.Disk.WarnPercent = n })},
	{Path: "disk.fail_percent", Type: typePercent, Default: "97",
		Help:   "Usage above this fails.",
		decode: percentLeaf(func(c *Config, n int) { c.Disk.FailPercent = n })},
	{Path: "ssh", Help: "The ssh check's authentication baseline."},
	{Path: "ssh.baseline", Help: "Per sshd authentication setting, the values sshd may have. A setting left out keeps the default baseline: no password or keyboard-interactive login, root only with keys (or not at all), no empty passwords, keys allowed. cloud-init's ssh_pwauth, when the instance sets it, decides password_authentication over this."},
	{Path: "ssh.baseline.password_authentication", Type: typeYesNo, Default: "no",
		Help:   "Accepted values of PasswordAuthentication.",
		decode: sshLeaf(yesNo, func(b *SSHBaseline, v []string) { b.PasswordAuthentication = v })},
	{Path: "ssh.baseline.kbd_interactive_authentication", Type: typeYesNo, Default: "no",
		Help:   "Accepted values of KbdInteractiveAuthentication.",
		decode: sshLeaf(yesNo, func(b *SSHBaseline, v []string) { b.KbdInteractiveAuthentication = v })},
	{Path: "ssh.baseline.permit_root_login", Type: typeRoot, Default: "[no, prohibit-password, without-password, forced-commands-only]",
		Help:   "Accepted values of PermitRootLogin.",
		decode: sshLeaf(rootLogin, func(b *SSHBaseline, v []string) { b.PermitRootLogin = v })},
	{Path: "ssh.baseline.permit_empty_passwords", Type: typeYesNo, Default: "no",
		Help:   "Accepted values of PermitEmptyPasswords.",
		decode: sshLeaf(yesNo, func(b *SSHBaseline, v []string) { b.PermitEmptyPasswords = v })},
	{Path: "ssh.baseline.pubkey_authentication", Type: typeYesNo, Default: "yes",
		Help:   "Accepted values of PubkeyAuthentication.",
		decode: sshLeaf(yesNo, func(b *SSHBaseline, v []string) { b.PubkeyAuthentication = v })},
	{Path: "systemd", Help: "The systemd check's boot budget."},
	{Path: "systemd.boot_budget", Type: typeDuration, Default: "60s",
		Help:   "Bounds userspace start-up: from systemd's start to the end of the boot transaction, and to cloud-final, the guest agent and sshd becoming active. Guests without KVM (TCG) need about the default.",
		decode: durationLeaf(true, func(c *Config, _ []string, d time.Duration) { c.Systemd.BootBudget = d })},
	{Path: "time_sync", Help: "The time-sync check's bound on the clock error."},
	{Path: "time_sync.max_offset", Type: typeDuration, Default: "1s",
		Help:   "How far the kernel's own estimate of the clock error (offset plus estimated error) may go before the check fails.",
		decode: durationLeaf(true, func(c *Config, _ []string, d time.Duration) { c.TimeSync.MaxOffset = d })},
	{Path: "probe", enter: enterProbe,
		Help: "guestcheck probe, the command of an exec readiness probe (KubeVirt readinessProbe.exec). The section's presence, even a bare probe:, declares that the platform runs exec probes through the guest agent; the qemu-guest-agent check then fails when the agent's RPC filter blocks guest-exec."},
	{Path: "probe.checks", Type: typeCheckIDs, Default: "[" + strings.Join(DefaultProbeChecks, ", ") + "]",
		Help:   "The checks whose verdict counts. dns cannot count: a probe makes no network probes.",
		decode: namesLeaf(func(c *Config, v []string, lines []int) { c.Probe.Checks, c.Probe.lines = v, lines })},
	{Path: "probe.timeout", Type: typeDuration, Default: DefaultProbeTimeout.String(),
		Help:   "Bounds the whole probe, counted from process start; each check's own deadline is capped by it. At most " + MaxProbeTimeout.String() + ": the platform runs a probe every 10 s by default. guestcheck probe --timeout overrides it.",
		decode: durationLeaf(false, func(c *Config, _ []string, d time.Duration) { c.Probe.Timeout = d })},
	{Path: "probe.warn_not_ready", Type: typeBool, Default: "false",
		Help:   "true makes a warning \"not ready\" as well; by default only fail and error (and cloud-init still on its way) are.",
		decode: boolLeaf(func(c *Config, _ []string, v bool) { c.Probe.WarnNotReady = v })},
}

// keyIndex maps a Path to its entry in Keys.
var keyIndex = func() map[string]*Key {
	m := make(map[string]*Key, len(Keys))
	for i := range Keys {
		m[Keys[i].Path] = &Keys[i]
	}
	return m
}()

// children lists the names of the keys directly under the section at
// path ("" for the top level), in table order.
func children(path string) []string {
	var out []string
	for _, k := range Keys {
		parent, name := splitPath(k.Path)
		if parent == path && !strings.HasSuffix(name, "[]") {
			out = append(out, name)
		}
	}
	return out
}

// splitPath cuts a key path into its parent and last segment; a list's
// entry "waivers[].check" has parent "waivers[]".
func splitPath(p string) (parent, name string) {
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return "", p
}
