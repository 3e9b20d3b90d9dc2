// Package probe is the judgement behind `guestcheck probe`, a platform's
// exec readiness or liveness probe: which checks it runs, whether their
// results make the machine ready, and the one bounded line that says so.
// cmd/guestcheck parses the flags, wires the Env, prints and exits.
package probe

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// MaxLine caps the probe's line: the kubelet keeps at most 10 KiB of a
// probe's output in its Unhealthy event; a quarter of it stays readable.
const MaxLine = 2048

// Select resolves probe.checks against the registry all, in the
// registry's order; an unknown ID is an error naming the file and line.
func Select(all []runner.Check, p *config.ProbeConfig) ([]runner.Check, error) {
	for i, id := range p.Checks {
		if !runner.Has(all, id) {
			return nil, fmt.Errorf("%s: probe.checks: unknown check ID %q (see guestcheck --list)", p.Where(i), id)
		}
	}
	var out []runner.Check
	for _, c := range all {
		if slices.Contains(p.Checks, c.ID) {
			// A dependency outside the probe is not enforced by the
			// runner, which is what a subset wants.
			out = append(out, c)
		}
	}
	return out, nil
}

// Verdict turns a probe's results into ready or not and the message after
// the verdict word: when ready, the checks run and the time they took;
// when not, the checks that keep it from ready, grouped by what they are
// ("failing:" for a fail or an error, "warning:", "pending:" for a
// pending skip), each group's IDs followed by each one's status and
// summary. A fail or an error is not ready, and so is a pending code
// (cloud-init still running or not started); a warning only with
// warnNotReady.
func Verdict(results []runner.Result, warnNotReady bool, took time.Duration) (bool, string) {
	groups := []struct {
		word     string
		ids, why []string
	}{{word: "failing"}, {word: "warning"}, {word: "pending"}}
	bad := false
	for _, r := range results {
		notOK, summary := notReady(r, warnNotReady)
		if !notOK {
			continue
		}
		g := &groups[0]
		switch r.Status {
		case runner.Warn:
			g = &groups[1]
		case runner.Pass, runner.Skip:
			g = &groups[2]
		}
		g.ids = append(g.ids, r.ID)
		g.why = append(g.why, fmt.Sprintf("%s: %s: %s", r.ID, r.Status, summary))
		bad = true
	}
	if bad {
		var parts []string
		for _, g := range groups {
			if len(g.ids) > 0 {
				parts = append(parts, g.word+": "+strings.Join(g.ids, ",")+" ("+strings.Join(g.why, "; ")+")")
			}
		}
		return false, strings.Join(parts, "; ")
	}
	all := make([]string, len(results))
	for i, r := range results {
		all[i] = r.ID
	}
	noun := "checks"
	if len(results) == 1 {
		noun = "check"
	}
	return true, fmt.Sprintf("%d %s (%s) in %d ms", len(results), noun, strings.Join(all, ","), took.Milliseconds())
}

// TimedOut is the message of a probe whose deadline passed before every
// check finished: the deadline and the unfinished checks, said once, then
// what Verdict says of the checks that did finish and are not ready.
// limit is the deadline as the user set it ("1ms (--timeout)"). ok is
// false when every check finished after all: Verdict then has the word.
func TimedOut(results []runner.Result, warnNotReady bool, limit string) (msg string, ok bool) {
	var cut []string
	var rest []runner.Result
	for _, r := range results {
		if runner.TimedOut(r) {
			cut = append(cut, r.ID)
		} else {
			rest = append(rest, r)
		}
	}
	if len(cut) == 0 {
		return "", false
	}
	msg = "timed out after " + limit + ": " + strings.Join(cut, ",") + " did not finish"
	if ready, why := Verdict(rest, warnNotReady, 0); !ready {
		msg += "; " + why
	}
	return msg, true
}

// notReady judges one result and gives the summary that says why: the
// result's own, or the pending finding's message.
func notReady(r runner.Result, warnNotReady bool) (bool, string) {
	bad := r.Status == runner.Fail || r.Status == runner.Error || !r.Status.Valid() ||
		(warnNotReady && r.Status == runner.Warn)
	summary := r.Summary
	for _, f := range r.Findings {
		if !bad && f.Status != runner.Pass && f.Pending {
			bad, summary = true, f.Message
		}
	}
	return bad, summary
}

// Line makes s one line of printable text no longer than MaxLine bytes:
// control characters (newlines, escape sequences) become spaces and a
// long line is cut at a character boundary.
func Line(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	if len(s) <= MaxLine {
		return s
	}
	const more = " ..."
	cut := MaxLine - len(more)
	for cut > 0 && (s[cut]&0xc0) == 0x80 {
		cut--
	}
	return s[:cut] + more
}
