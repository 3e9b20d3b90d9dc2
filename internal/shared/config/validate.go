package config

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/hostrule"
)

// MaxProbeTimeout bounds probe.timeout. The kubelet runs an exec probe
// every periodSeconds (10 s by default) and KubeVirt gives up on it after
// timeoutSeconds (1 s by default): a probe allowed longer than a period
// would answer after the next one has started, so such a bound is a
// mistake (usually a unit: 2m for 2s).
const MaxProbeTimeout = 10 * time.Second

// Issue is one value that a section's own rules refuse, found after the
// file decoded: the key path as the file writes it and what is wrong, in
// the user's words. The loader places it at the line of at (of Path when
// at is empty), or of the nearest enclosing key in the file.
type Issue struct {
	Path string
	Msg  string
	at   string
	// orElse says the same from the other key of a pair, for a file that
	// sets only that one (disk.fail_percent: 80 under the default 90).
	orElse *Issue
}

// ExpectedHostname judges a hostname.expected value with the rule the
// hostname check applies to names (nil when valid, or when empty: not
// set). The loader refuses a bad one, and the check calls it too, so the
// two cannot disagree.
func ExpectedHostname(s string) error {
	if s = strings.TrimSpace(s); s == "" {
		return nil
	}
	return hostrule.Validate(s)
}

// RouteTarget parses a routes.targets entry. Only addresses are taken:
// resolving a name would send traffic, which the routes check never does.
// The loader refuses a bad one, and the routes check parses with it.
func RouteTarget(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	return a, nil
}

// Issues are the hostname section's values that its rules refuse.
func (h HostnameConfig) Issues() []Issue {
	if err := ExpectedHostname(h.Expected); err != nil {
		return []Issue{{Path: "hostname.expected", Msg: fmt.Sprintf("%q is not a valid host name: %v; write letters, digits and '-' in dot-separated labels, such as web-1.example.org", h.Expected, err)}}
	}
	return nil
}

// Issues are the routes section's values that its rules refuse: each
// entry of targets that is not an IP address.
func (r RoutesConfig) Issues() []Issue {
	var out []Issue
	for i, t := range r.Targets {
		if _, err := RouteTarget(t); err != nil {
			out = append(out, Issue{Path: fmt.Sprintf("routes.targets[%d]", i),
				Msg: err.Error() + "; write an address such as 192.0.2.10 or 2001:db8::1 (names are not resolved, so that the check sends no traffic)"})
		}
	}
	return out
}

// Issues are the disk section's values that its rules refuse: a warning
// threshold above the failure one would never warn.
func (d DiskConfig) Issues() []Issue {
	if d.WarnPercent > d.FailPercent {
		return []Issue{{Path: "disk.warn_percent",
			Msg: fmt.Sprintf("%d is above disk.fail_percent (%d), so a filesystem would fail before it ever warned; write a warn_percent at or below fail_percent (the defaults are 90 and 97)", d.WarnPercent, d.FailPercent),
			orElse: &Issue{Path: "disk.fail_percent",
				Msg: fmt.Sprintf("%d is below disk.warn_percent (%d), so a filesystem would fail before it ever warned; write a fail_percent at or above warn_percent (the defaults are 90 and 97)", d.FailPercent, d.WarnPercent)}}}
	}
	return nil
}

// Issues are the probe section's values that its rules refuse: an empty
// checks list, a check that cannot count, one listed twice, and a
// timeout past MaxProbeTimeout.
func (p ProbeConfig) Issues() []Issue {
	var out []Issue
	if p.Checks != nil && len(p.Checks) == 0 {
		out = append(out, Issue{Path: "probe.checks", Msg: fmt.Sprintf("empty list: list at least one check ID, or remove the key for the default [%s]", strings.Join(DefaultProbeChecks, ", "))})
	}
	for i, id := range p.Checks {
		at := fmt.Sprintf("probe.checks[%d]", i)
		if why, bad := noProbeChecks[id]; bad {
			out = append(out, Issue{Path: "probe.checks", at: at, Msg: fmt.Sprintf("%s cannot count towards a probe: %s", id, why)})
		} else if slices.Index(p.Checks, id) != i {
			out = append(out, Issue{Path: "probe.checks", at: at, Msg: id + " is listed twice"})
		}
	}
	if p.Timeout > MaxProbeTimeout {
		out = append(out, Issue{Path: "probe.timeout", Msg: fmt.Sprintf("%s is longer than a probe may take; write at most %s (the platform runs a probe every 10 s by default and gives up on it after 1 s), such as %s, the default", showDuration(p.Timeout), showDuration(MaxProbeTimeout), showDuration(DefaultProbeTimeout))})
	}
	return out
}

// Issues are every section's values that their rules refuse, in no
// particular order; the loader places and sorts them.
func (c *Config) Issues() []Issue {
	return slices.Concat(c.Hostname.Issues(), c.Routes.Issues(), c.Disk.Issues(), c.Probe.Issues())
}

// showDuration writes d as the file would: 2m, not Go's 2m0s.
func showDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// lineOf is the line of key path p in the file, or of the nearest
// enclosing key there ("disk" for a disk.warn_percent left at its
// default); 0 when none is.
func (c *Config) lineOf(p string) int {
	for p != "" {
		if n := c.lines[p]; n > 0 {
			return n
		}
		if i := strings.LastIndexAny(p, ".["); i >= 0 {
			p = p[:i]
		} else {
			p = ""
		}
	}
	return 0
}

// validateSections adds every section's Issues to the problems found
// while decoding, whatever those were, so that one pass reports all.
func (d *decoder) validateSections() {
	for _, is := range d.c.Issues() {
		if is.orElse != nil && d.c.lines[is.Path] == 0 {
			is = *is.orElse
		}
		d.add(d.c.lineOf(cmp.Or(is.at, is.Path)), "%s: %s", is.Path, is.Msg)
	}
}
