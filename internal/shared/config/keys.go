package config

import (
	"slices"
	"strings"
	"time"
)

// Key is one configuration key, described once. The strict decoder walks
// the file against the keys (its "known here" lists come from them), and
// guestcheck.yaml(5) is generated from them (Describe), so the page, the
// messages and the decoder cannot drift apart.
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
	// Example is what the shipped, all-comments file writes for the key
	// when Default is words rather than a value ("the first NIC"); for a
	// section, the YAML lines under it, which then stand for its keys.
	Example string

	decode leafFunc // nil for a section
	enter  leafFunc // a section's hook, run before its keys (may be nil)
}

// Leaf reports whether the key holds a value rather than further keys.
func (k Key) Leaf() bool { return k.decode != nil }

// oneOfType says in words what a OneOf key holds.
func oneOfType(valid []string) string {
	if len(valid) == 2 {
		return valid[0] + ", " + valid[1] + ", or a list of them"
	}
	return "one of " + strings.Join(valid, ", ") + ", or a list of them"
}

// The value types, in the user's words.
const (
	typeDuration = "duration (such as 500ms, 5s, 2m or 1h30m)"
	typePercent  = "number from 0 to 100"
	typeCount    = "whole number, 0 or more"
	typeBool     = "true or false"
	typeText     = "text"
	typeDate     = "date (YYYY-MM-DD)"
	typeCheckIDs = "list of check IDs"
)

// generalKeys are the keys of the file that belong to no one check, in
// the order guestcheck.yaml(5) describes them: the checks' own sections
// (Settings) come between waivers and probe.
var generalKeys = []Key{
	{Path: "timeout", Type: typeDuration, Default: "60s",
		Help:   "Bounds the whole run; checks still running then are reported as errors. --timeout overrides it.",
		decode: leaf(parseDuration(true), func(c *Config, _ []string, d time.Duration) { c.Timeout = d })},
	{Path: "check_timeout", Type: typeDuration, Default: DefaultCheckTimeout.String(),
		Help:   "The default deadline of each check; a check that overruns it is reported as an error (check-timeout).",
		decode: leaf(parseDuration(true), func(c *Config, _ []string, d time.Duration) { c.CheckTimeout = d })},
	{Path: "checks",
		Help:    "Per-check settings, keyed by check ID (guestcheck --list names them). An unknown ID is an error.",
		Example: "dns: {enabled: true, timeout: 5s}\ncloud-init: {timeout: 10s}"},
	{Path: "checks.ID", enter: enterCheck,
		Help: "The settings of the check ID, such as dns: {enabled: false}."},
	{Path: "checks.ID.enabled", Type: typeBool, Default: "true",
		Help: "false removes the check from default runs; --only still runs it.",
		decode: leaf(parseBool, func(c *Config, at []string, v bool) {
			cc := c.Checks[at[0]]
			cc.Enabled = &v
			c.Checks[at[0]] = cc
		})},
	{Path: "checks.ID.timeout", Type: typeDuration, Default: "check_timeout",
		Help: "This check's deadline, instead of check_timeout.",
		decode: leaf(parseDuration(false), func(c *Config, at []string, d time.Duration) {
			cc := c.Checks[at[0]]
			cc.Timeout = d
			c.Checks[at[0]] = cc
		})},
	{Path: "waivers",
		Help:    "Findings the operator accepts: each entry waives one finding code of one check, with a reason and an optional expiry date. A waived finding keeps its status and is still reported, marked as waived with the reason, but it does not count towards the exit code or the check's status. From the expiry date on (00:00 UTC), the waiver no longer applies and the check reports waiver-expired (a warning) until the entry is renewed or removed. Example: {check: time-sync, code: time-sync-clock-unsynced, reason: \"no NTP on the test network\", expires: 2027-03-01}.",
		Example: "- {check: time-sync, code: time-sync-clock-unsynced, reason: \"no NTP on the test network\", expires: 2027-03-01}"},
	{Path: "waivers[]", enter: enterWaiver, Help: "One waiver."},
	{Path: "waivers[].check", Type: "check ID", Help: "The check whose finding is waived (required).",
		decode: lastWaiver(func(w *Waiver, s string) { w.Check = s })},
	{Path: "waivers[].code", Type: "finding code", Help: "The finding code waived; it must be one of that check's codes (guestcheck explain CHECK lists them; required).",
		decode: lastWaiver(func(w *Waiver, s string) { w.Code = s })},
	{Path: "waivers[].reason", Type: typeText, Help: "Why the finding is accepted; every report shows it (required).",
		decode: lastWaiver(func(w *Waiver, s string) { w.Reason = s })},
	{Path: "waivers[].expires", Type: typeDate, Default: "never",
		Help: "The day the waiver stops applying, at 00:00 UTC.", decode: expiresLeaf},
	{Path: "probe", enter: enterProbe,
		Help: "guestcheck probe, the command of an exec readiness probe (KubeVirt readinessProbe.exec). The section's presence, even a bare probe:, declares that the platform runs exec probes through the guest agent; the qemu-guest-agent check then fails when the agent's RPC filter blocks guest-exec."},
	{Path: "probe.checks", Type: typeCheckIDs, Default: "[" + strings.Join(DefaultProbeChecks, ", ") + "]",
		Help:   "The checks whose verdict counts. dns cannot count: a probe makes no network probes.",
		decode: leaf(parseNames, func(c *Config, _ []string, v names) { c.Probe.Checks, c.Probe.lines = v.vals, v.lines })},
	{Path: "probe.timeout", Type: typeDuration, Default: DefaultProbeTimeout.String(),
		Help:   "Bounds the whole probe, counted from process start; each check's own deadline is capped by it. At most " + MaxProbeTimeout.String() + ": the platform runs a probe every 10 s by default. guestcheck probe --timeout overrides it.",
		decode: leaf(parseDuration(false), func(c *Config, _ []string, d time.Duration) { c.Probe.Timeout = d })},
	{Path: "probe.warn_not_ready", Type: typeBool, Default: "false",
		Help:   "true makes a warning \"not ready\" as well; by default only fail and error (and cloud-init still on its way) are.",
		decode: leaf(parseBool, func(c *Config, _ []string, v bool) { c.Probe.WarnNotReady = v })},
}

// probeAt is where the probe section starts in generalKeys: the checks'
// sections are described before it.
var probeAt = func() int {
	for i, k := range generalKeys {
		if k.Path == "probe" {
			return i
		}
	}
	panic("config: no probe section")
}()

// Describe lists every key of the file with its whole path, sections
// before the keys they hold, in the order guestcheck.yaml(5) describes
// them: the general keys, then the checks' sections secs, then probe.
func Describe(secs ...Section) []Key {
	out := slices.Clone(generalKeys[:probeAt])
	for _, s := range secs {
		out = append(out, s.keys...)
	}
	return append(out, generalKeys[probeAt:]...)
}

// schema is the keys a file is decoded against: the general ones and
// the checks' sections.
type schema struct {
	keys  []Key
	index map[string]*Key
	secs  []Section
}

func newSchema(secs []Section) *schema {
	s := &schema{keys: Describe(secs...), secs: secs}
	s.index = make(map[string]*Key, len(s.keys))
	for i := range s.keys {
		s.index[s.keys[i].Path] = &s.keys[i]
	}
	return s
}

// children lists the names of the keys directly under the section at
// path ("" for the top level), in table order.
func (s *schema) children(path string) []string {
	var out []string
	for _, k := range s.keys {
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
