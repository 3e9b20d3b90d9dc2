package report

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TextOptions tunes the human report.
type TextOptions struct {
	// Color adds ANSI colour to status words; main enables it only on a
	// terminal and when NO_COLOR is unset.
	Color bool
	// Verbose also shows passing findings and every finding's evidence
	// (its Detail); without it the text gives what, why and the fix.
	Verbose bool
	// Width is the line width to wrap at; 0 means 80, which suits a
	// serial console.
	Width int
}

var colours = map[runner.Status]string{
	runner.Fail:  "\x1b[1;31m",
	runner.Error: "\x1b[1;35m",
	runner.Warn:  "\x1b[1;33m",
	runner.Pass:  "\x1b[32m",
	runner.Skip:  "\x1b[2m",
}

// WriteText renders r for a person: the root when it is not "/", checks
// grouped and worst first, the findings that need attention with evidence
// and fix, then a one-line summary.
func WriteText(w io.Writer, r Report, o TextOptions) error {
	width := o.Width
	if width <= 0 {
		width = 80
	}
	bw := bufio.NewWriter(w)
	word := func(s runner.Status) string {
		u := strings.ToUpper(string(s))
		if o.Color {
			u = colours[s] + u + "\x1b[0m"
		}
		// Pad after the colour codes so columns line up either way.
		return u + strings.Repeat(" ", max(0, 5-len(s)))
	}
	if r.Root != "" && r.Root != "/" {
		// Named once, here: every path below is the guest's own.
		fmt.Fprintf(bw, "Guest root: %s (the paths below are inside it)\n\n", r.Root)
	}
	idw := 0
	for _, c := range r.Checks {
		idw = max(idw, len(c.ID))
	}
	for _, c := range WorstFirst(r) {
		head := fmt.Sprintf("%s %-*s  ", word(c.Status), idw, c.ID)
		plain := 6 + idw + 2
		writeWrapped(bw, head, strings.Repeat(" ", plain), plain, c.Summary, width)
		for _, f := range c.Findings {
			if !o.Verbose && (f.Status == runner.Pass || (f.Status == runner.Skip && c.Status == runner.Skip)) {
				continue
			}
			line := f.Code + ": " + f.Message
			if f.Message == c.Summary {
				line = f.Code // already said on the check's line
			}
			writeWrapped(bw, "  "+word(f.Status)+" ", "        ", 8, line, width)
			if f.Waived != nil {
				writeWrapped(bw, "        waived: ", "                ", 16, waivedText(f.Waived), width)
			}
			// Without -v the console gets what, why and the fix; the
			// evidence is one -v (or --format json) away.
			if o.Verbose {
				for _, k := range slices.Sorted(maps.Keys(f.Detail)) {
					lines := strings.Split(strings.TrimRight(f.Detail[k], "\n"), "\n")
					writeWrapped(bw, "        "+k+": ", "          ", 10+len(k), lines[0], width)
					for _, l := range lines[1:] {
						writeWrapped(bw, "          ", "          ", 10, l, width)
					}
				}
			}
			if f.Remediation != "" {
				writeWrapped(bw, "        fix: ", "             ", 13, f.Remediation, width)
			}
		}
	}
	if !o.Verbose && r.Status != runner.Pass && r.Status != runner.Skip {
		fmt.Fprintln(bw, "\nEvidence for each finding: guestcheck -v, or --format json.")
	}
	if n := r.Summary.Waived; n > 0 {
		fmt.Fprintf(bw, "\n%s accepted by the configuration's waivers (marked waived: above).\n", count(n, "finding"))
	}
	fmt.Fprintf(bw, "\n%s\n", fit80(summaryLine(r, strings.TrimSpace(word(r.Status)), false)))
	return bw.Flush()
}

// fit80 keeps the text report's last line inside 80 columns: with ten or
// more checks of one status and a run of seconds it is longer, and the
// duration goes to a line of its own, under the status.
func fit80(line string) string {
	i := strings.LastIndex(line, ") in ")
	if utf8.RuneCountInString(line) <= 80 || i < 0 {
		return line
	}
	pad := strings.Repeat(" ", strings.Index(line, ": ")+2)
	return line[:i+1] + "\n" + pad + line[i+2:]
}

// SummaryLine is the line units and consoles print on their own
// (--summary), e.g.
// "guestcheck: FAIL (9 checks: 1 fail, 1 error, 1 warn, 4 pass, 2 skip) in 12 ms; fail: fstab; error: dns":
// the text report's last line with "; N findings waived" inside the
// parentheses when a waiver applied, and then the checks that failed and
// could not run, by ID (at most MaxSummaryIDs, then "and N more"), so
// that a console shows what to look at. The counts are of checks, by
// the status the text report gives each check on its own line: a
// finding's status under a check (an ERROR finding in a FAIL check) is
// not counted again. The status stands apart from the counts, so that
// "FAIL 9 checks" is not read as nine checks failing.
func SummaryLine(r Report) string {
	return summaryLine(r, strings.ToUpper(string(r.Status)), true) + failingIDs(r, MaxSummaryIDs)
}

// MaxSummaryIDs bounds the check IDs SummaryLine names.
const MaxSummaryIDs = 5

// summaryLine is the counts line; withWaived adds the waived findings
// (the text report says them on a line of their own, keeping this one
// inside 80 columns).
func summaryLine(r Report, status string, withWaived bool) string {
	s := r.Summary
	waived := ""
	if s.Waived > 0 && withWaived {
		waived = "; " + count(s.Waived, "finding") + " waived"
	}
	checks := count(len(r.Checks), "check")
	return fmt.Sprintf("%s: %s (%s: %d fail, %d error, %d warn, %d pass, %d skip%s) in %d ms",
		r.Tool, status, checks, s.Fail, s.Error, s.Warn, s.Pass, s.Skip, waived, r.DurationMS)
}

// failingIDs is "; fail: A, B; error: C", the failed checks then those
// that could not run, at most limit IDs in all and then "and N more";
// "" when none failed or erred.
func failingIDs(r Report, limit int) string {
	var b strings.Builder
	shown, total := 0, 0
	for _, st := range []runner.Status{runner.Fail, runner.Error} {
		var ids []string
		for _, c := range r.Checks {
			if c.Status != st {
				continue
			}
			total++
			if shown < limit {
				ids = append(ids, c.ID)
				shown++
			}
		}
		if len(ids) > 0 {
			fmt.Fprintf(&b, "; %s: %s", st, strings.Join(ids, ", "))
		}
	}
	if total > shown {
		fmt.Fprintf(&b, " and %d more", total-shown)
	}
	return b.String()
}

// count is "1 noun" or "N nouns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// waivedText is a waiver's reason and expiry, as the text-like formats
// show it: "no NTP on the test network (until 2027-03-01)".
func waivedText(w *runner.Waived) string {
	if w.Expires == "" {
		return w.Reason
	}
	return w.Reason + " (until " + w.Expires + ")"
}

// writeWrapped writes first+text wrapped at width; continuation lines start
// with indent. used is the printed width of first (it may hold colour codes).
func writeWrapped(w io.Writer, first, indent string, used int, text string, width int) {
	words := strings.Fields(text)
	line := first
	n := used
	fresh := true
	for _, wd := range words {
		if !fresh && n+1+len(wd) > width {
			fmt.Fprintln(w, line)
			line, n, fresh = indent, len(indent), true
		}
		if !fresh {
			line += " "
			n++
		}
		line += wd
		n += len(wd)
		fresh = false
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}
