package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
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
	// OrElse says the same from the other key of a pair, for a file that
	// sets only that one (disk.fail_percent: 80 under the default 90).
	OrElse *Issue
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

// issues are every section's values that their rules refuse, in no
// particular order; the loader places and sorts them.
func (d *decoder) issues() []Issue {
	out := d.c.Probe.Issues()
	for _, s := range d.s.secs {
		if v, ok := d.c.sections[s.Name]; ok {
			out = append(out, s.issues(v)...)
		}
	}
	return out
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
	for _, is := range d.issues() {
		if is.OrElse != nil && d.c.lines[is.Path] == 0 {
			is = *is.OrElse
		}
		d.add(d.c.lineOf(cmp.Or(is.at, is.Path)), "%s: %s", is.Path, is.Msg)
	}
}
