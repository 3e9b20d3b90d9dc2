package report

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Nagios plugin return codes, from the Monitoring Plugins development
// guidelines. They differ from guestcheck's own (ExitWarn is 2 here, 1
// there), so main uses them only when asked to explicitly
// (--exit-codes nagios), never because of --format nagios.
const (
	NagiosOK       = 0
	NagiosWarning  = 1
	NagiosCritical = 2
	NagiosUnknown  = 3
)

// DefaultServiceName is the first word of the Nagios status line.
const DefaultServiceName = "GUESTCHECK"

// NagiosOptions tunes the plugin output.
type NagiosOptions struct {
	// ServiceName starts the status line ("GUESTCHECK CRITICAL: ...");
	// empty means DefaultServiceName. CheckServiceName says which are valid.
	ServiceName string
	// Verbose lists every finding in the long text, passes and skips too;
	// without it the long text lists the warn, fail and error findings.
	Verbose bool
}

// nagiosWords are the state names the guidelines use in the status line.
var nagiosWords = [...]string{NagiosOK: "OK", NagiosWarning: "WARNING", NagiosCritical: "CRITICAL", NagiosUnknown: "UNKNOWN"}

// NagiosExitCode maps r onto a plugin return code: any fail is CRITICAL;
// otherwise any error (a check that could not run, or a status guestcheck
// does not know) is UNKNOWN; otherwise any warn is WARNING; a run that
// passed at least one check and found nothing worse is OK. A run in which
// every check was skipped (or none ran) verified nothing and is UNKNOWN,
// not OK. Like ExitCode it looks at findings as well as checks (a waived
// finding counts as a pass), and it is the one place this mapping is made: the status word of WriteNagios comes
// from it too.
func NagiosExitCode(r Report) int {
	var fail, errored, warn, pass bool
	see := func(st runner.Status) {
		switch st {
		case runner.Pass:
			pass = true
		case runner.Skip:
		case runner.Warn:
			warn = true
		case runner.Fail:
			fail = true
		default:
			errored = true
		}
	}
	for _, c := range r.Checks {
		see(c.Status)
		for _, f := range c.Findings {
			if st := f.Counted(); st != runner.Pass { // a pass finding in a skipped check verified nothing on its own; a waived one counts as that
				see(st)
			}
		}
	}
	switch {
	case fail:
		return NagiosCritical
	case errored:
		return NagiosUnknown
	case warn:
		return NagiosWarning
	case pass:
		return NagiosOK
	}
	return NagiosUnknown
}

// NagiosWord is the state name for a plugin return code ("CRITICAL").
func NagiosWord(code int) string {
	if code < 0 || code >= len(nagiosWords) {
		return nagiosWords[NagiosUnknown]
	}
	return nagiosWords[code]
}

// CheckServiceName rejects a service name that would break the status
// line: empty, a pipe (which starts performance data), or a control
// character (a newline would end the line).
func CheckServiceName(s string) error {
	if s == "" {
		return errors.New("service name is empty")
	}
	for _, r := range s {
		if r == '|' {
			return errors.New("service name must not contain '|' (it starts performance data)")
		}
		if r < 0x20 || r == 0x7f {
			return errors.New("service name must not contain control characters")
		}
	}
	return nil
}

// nagiosTextWidth is the guidelines' advice for the status line's text
// (the part before the performance data): it should fit a pager message.
const nagiosTextWidth = 80

// WriteNagios renders r as Nagios plugin output: one status line,
// "SERVICE STATE: counts: problem checks | perfdata", then long text, one
// line per finding worth reading, worst check first. The text never holds
// a '|' (each is replaced by U+00A6 '¦'), so all performance data is on
// the first line; the fix templates hold none (TestFixesHaveNoPipe in
// internal/checks), so only a '|' from the guest is ever replaced and
// every fix stays a command to copy. The status line's text is kept to 80 characters by
// shortening the list of problem checks.
func WriteNagios(w io.Writer, r Report, o NagiosOptions) error {
	svc := o.ServiceName
	if svc == "" {
		svc = DefaultServiceName
	}
	if err := CheckServiceName(svc); err != nil {
		return err
	}
	s := r.Summary
	var counts []string
	for _, n := range []struct {
		n    int
		word string
	}{{s.Fail, "fail"}, {s.Error, "error"}, {s.Warn, "warn"}} {
		if n.n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n.n, n.word))
		}
	}
	if len(counts) == 0 {
		counts = []string{fmt.Sprintf("%d pass", s.Pass), fmt.Sprintf("%d skip", s.Skip)}
	}
	head := fmt.Sprintf("%s %s: %s", svc, NagiosWord(NagiosExitCode(r)), strings.Join(counts, ", "))
	var problems []string
	for _, c := range WorstFirst(r) {
		if st := valid(c.Status); st != runner.Pass && st != runner.Skip {
			problems = append(problems, nagiosText(c.ID))
		}
	}
	head += problemList(head, problems, nagiosTextWidth)

	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s | %s\n", head, nagiosPerfdata(r))
	for _, c := range WorstFirst(r) {
		for _, f := range c.Findings {
			st := valid(f.Status)
			if !o.Verbose && (st == runner.Pass || st == runner.Skip) {
				continue
			}
			word := strings.ToUpper(string(st))
			if f.Waived != nil {
				word += " (waived)"
			}
			fmt.Fprintf(bw, "%s %s: %s: %s\n", word, nagiosText(c.ID),
				nagiosText(f.Code), nagiosText(f.Message))
			if f.Waived != nil {
				fmt.Fprintf(bw, "  waived: %s\n", nagiosText(waivedText(f.Waived)))
			}
			if f.Remediation != "" {
				fmt.Fprintf(bw, "  fix: %s\n", nagiosText(f.Remediation))
			}
		}
	}
	return bw.Flush()
}

// NagiosUnknownLine is the plugin output for a run that never got to check
// anything (a bad configuration, an unknown check ID): "SERVICE UNKNOWN:
// msg", on one line and without pipes, so Nagios shows the reason rather
// than "(No output on stdout)".
func NagiosUnknownLine(service, msg string) string {
	if service == "" {
		service = DefaultServiceName
	}
	return fmt.Sprintf("%s %s: %s\n", nagiosText(service), NagiosWord(NagiosUnknown), nagiosText(msg))
}

// problemList is ": a, b, c" with as many IDs as fit in width after head,
// ending in ", ..." when some had to be left out; "" when there are none or
// not even one fits.
func problemList(head string, ids []string, width int) string {
	if len(ids) == 0 {
		return ""
	}
	for n := len(ids); n > 0; n-- {
		list := strings.Join(ids[:n], ", ")
		if n < len(ids) {
			list += ", ..."
		}
		if out := ": " + list; len(head)+len(out) <= width {
			return out
		}
	}
	return ""
}

// nagiosPerfdata is the performance data: checks per status, the number of
// checks, and the run's duration, in the guidelines' label=value[UOM];;;min
// form. No thresholds: guestcheck's verdict is not a threshold on a number.
func nagiosPerfdata(r Report) string {
	s := r.Summary
	p := fmt.Sprintf("checks=%d;;;0 pass=%d;;;0 warn=%d;;;0 fail=%d;;;0 error=%d;;;0 skip=%d;;;0 duration=%ss;;;0",
		len(r.Checks), s.Pass, s.Warn, s.Fail, s.Error, s.Skip, millis(r.DurationMS))
	if s.Waived > 0 {
		p += fmt.Sprintf(" waived=%d;;;0", s.Waived)
	}
	return p
}

// nagiosText makes s safe for one line of plugin output: no pipe (it would
// start performance data), clean.Text's line breaks as spaces and other
// control and bidi characters as U+FFFD, and valid UTF-8.
func nagiosText(s string) string {
	return strings.ReplaceAll(clean.Text(s), "|", "¦")
}
