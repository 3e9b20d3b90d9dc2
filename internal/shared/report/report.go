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
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// SchemaVersion is the version of the JSON report. Changes within a
// version are additive only.
const SchemaVersion = 1

// Exit codes, shared by every output format (NagiosExitCode maps onto the
// plugin codes instead, when asked to).
const (
	ExitOK      = 0 // nothing worse than pass or skip
	ExitProblem = 1 // any fail or error
	ExitWarn    = 2 // warnings and no failure
	ExitUsage   = 3 // usage or configuration error
)

// Report is the whole result of one run.
type Report struct {
	SchemaVersion int           `json:"schema_version"`
	Tool          string        `json:"tool"`
	Version       string        `json:"version"`
	Host          Host          `json:"host"`
	Root          string        `json:"root"`
	StartedAt     time.Time     `json:"started_at"`
	DurationMS    int64         `json:"duration_ms"`
	Status        runner.Status `json:"status"`
	Summary       Summary       `json:"summary"`
	Checks        []Check       `json:"checks"`
	// Identity is the guest's identity items (guestid.Read), for
	// comparing VMs: every run of guestcheck fills it; the text formats
	// leave it out.
	Identity *guestid.Identity `json:"identity,omitempty"`
}

// Host identifies the machine and boot the report describes; runner.ReadHost
// fills it from the guest's root.
type Host = runner.Host

// Summary counts checks per status, and the findings waivers accepted.
type Summary struct {
	Pass  int `json:"pass"`
	Warn  int `json:"warn"`
	Fail  int `json:"fail"`
	Skip  int `json:"skip"`
	Error int `json:"error"`
	// Waived counts findings (not checks) that a waiver accepted; each is
	// still in its check's findings, with its own status.
	Waived int `json:"waived,omitempty"`
}

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
	for _, res := range results {
		// A copy: the findings carry their reference page, and the
		// caller's results stay as the checks returned them.
		fs := make([]runner.Finding, len(res.Findings))
		copy(fs, res.Findings)
		for i := range fs {
			// The runner's own codes are explained on their own page.
			fs[i].Reference = docs.PageOf(res.ID)
			if slices.Contains(runner.Codes, fs[i].Code) {
				fs[i].Reference = docs.PageOf(docs.Runner)
			}
		}
		res.Findings, res.DurationMS = fs, res.Duration.Milliseconds()
		r.Checks = append(r.Checks, res)
		r.Summary.add(res.Status)
		r.Summary.Waived += waivedIn(res)
	}
	r.Status = r.overall()
	return r
}

func (s *Summary) add(st runner.Status) {
	switch st {
	case runner.Pass:
		s.Pass++
	case runner.Warn:
		s.Warn++
	case runner.Fail:
		s.Fail++
	case runner.Skip:
		s.Skip++
	default:
		s.Error++
	}
}

// overall is the run's verdict over its checks (runner.Overall).
func (r Report) overall() runner.Status {
	sts := make([]runner.Status, len(r.Checks))
	for i, c := range r.Checks {
		sts[i] = c.Status
	}
	return runner.Overall(sts...)
}

// ExitCode is the process exit status for r: 1 for any fail or error, 2 for
// warnings without failures, 0 otherwise; a waived finding counts as a
// pass. Only pass, skip and warn are
// whitelisted, so an unknown status counts as a problem.
func ExitCode(r Report) int {
	code := ExitOK
	for _, c := range r.Checks {
		for _, st := range append([]runner.Status{c.Status}, findingStatuses(c)...) {
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

// findingStatuses are the statuses c's findings count with: a waived
// finding counts as a pass.
func findingStatuses(c Check) []runner.Status {
	out := make([]runner.Status, len(c.Findings))
	for i, f := range c.Findings {
		out[i] = f.Counted()
	}
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

// WorstFirst returns r's checks ordered worst status first, keeping the
// registry order among equals.
func WorstFirst(r Report) []Check {
	out := append([]Check(nil), r.Checks...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Status.Worse(out[j].Status) })
	return out
}
