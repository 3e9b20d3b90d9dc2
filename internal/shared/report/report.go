// Package report turns check results into guestcheck's one Report type,
// renders it with pure functions (text, JSON, Prometheus textfile, Nagios
// plugin output, JUnit XML, TAP, JSON lines; see Format), and computes the
// exit code once, from the findings, never from a renderer: ExitCode in
// guestcheck's scheme, NagiosExitCode in the plugin one.
package report

import (
	"slices"
	"sort"
	"time"

	"github.com/guestcheck/guestcheck/docs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// SchemaVersion is the version of the JSON report.
const SchemaVersion = reportv1.SchemaVersion

// Exit codes, shared by every output format (NagiosExitCode maps onto the
// plugin codes instead, when asked to).
const (
	ExitOK      = 0 // nothing worse than pass or skip
	ExitProblem = 1 // any fail or error
	ExitWarn    = 2 // warnings and no failure
	ExitUsage   = 3 // usage or configuration error
)

// Report is the whole result of one run, as reportv1 defines it for
// every reader.
type Report = reportv1.Report

// Host identifies the machine and boot the report describes; runner.ReadHost
// fills it from the guest's root.
type Host = runner.Host

// Check is one check's entry in the report: the runner's result itself.
type Check = runner.Result

// Meta is what the report says about the run besides the results.
type Meta struct {
	Tool, Version, Root string
	Host                Host
	StartedAt           time.Time
	Duration            time.Duration
	Identity            *guestid.Identity
}

// New builds a report; checks keep the order of results.
func New(results []runner.Result, m Meta) Report {
	r := Report{
		SchemaVersion: SchemaVersion,
		Tool:          m.Tool,
		Version:       m.Version,
		Host:          m.Host,
		Root:          m.Root,
		StartedAt:     m.StartedAt.UTC(),
		DurationMS:    m.Duration.Milliseconds(),
		Checks:        make([]Check, 0, len(results)),
		Identity:      m.Identity,
	}
	sts := make([]runner.Status, len(results))
	for i, res := range results {
		sts[i] = res.Status
		// A copy: the findings carry their reference page, and the
		// caller's results stay as the checks returned them.
		fs := make([]runner.Finding, len(res.Findings))
		copy(fs, res.Findings)
		for i := range fs {
			// The runner's own codes are explained on their own page.
			fs[i].Reference = docs.PageOf(res.ID)
			if slices.Contains(runner.IDs(runner.Codes), fs[i].Code) {
				fs[i].Reference = docs.PageOf(docs.Runner)
			}
		}
		res.Findings, res.DurationMS = fs, res.Duration.Milliseconds()
		r.Checks = append(r.Checks, res)
		r.Summary.Add(res.Status)
		r.Summary.Waived += waivedIn(res)
	}
	r.Status = reportv1.Overall(sts...) // the run's verdict over its checks
	return r
}

// ExitCode is the process exit status for r: 1 for any fail or error, 2 for
// warnings without failures, 0 otherwise; a waived finding counts as a
// pass. Only pass, skip and warn are
// whitelisted, so an unknown status counts as a problem.
func ExitCode(r Report) int {
	code := ExitOK
	for _, c := range r.Checks {
		sts := []runner.Status{c.Status}
		for _, f := range c.Findings {
			sts = append(sts, f.Counted()) // a waived finding counts as a pass
		}
		for _, st := range sts {
			switch st {
			case runner.Pass, runner.Skip:
			case runner.Warn:
				code = ExitWarn
			default:
				return ExitProblem
			}
		}
	}
	return code
}

// WorstFirst returns r's checks ordered worst status first, keeping the
// registry order among equals.
func WorstFirst(r Report) []Check {
	out := append([]Check(nil), r.Checks...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Status.Worse(out[j].Status) })
	return out
}

// waivedIn counts c's waived findings.
func waivedIn(c Check) int {
	n := 0
	for _, f := range c.Findings {
		if f.Waived != nil {
			n++
		}
	}
	return n
}
