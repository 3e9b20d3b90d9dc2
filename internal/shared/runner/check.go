// Package runner holds guestcheck's core vocabulary: a Check is data
// plus a Run function, a Finding (reportv1's) is one judged fact with its
// evidence and remediation, and the runner executes checks concurrently,
// each under its own deadline, honouring dependencies between them.
package runner

import (
	"context"
	"maps"

	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// Check is one verification, described as data plus the function that runs
// it. Checks never print, exit or touch guest files except through Env.Root.
type Check struct {
	// ID is the stable kebab-case name used by --only, --skip, the config
	// file and the JSON report.
	ID string
	// Title is a short human heading.
	Title string
	// Description says in one line what the check verifies (for --list).
	Description string
	// Why says why the check matters on the platforms guestcheck serves
	// (Markdown): the first section of the check's reference page when
	// the page is generated whole.
	Why string
	// Settings is the check's own section of guestcheck.yaml (such as
	// dns: for dns.names), declared beside the check as a
	// config.Settings; the zero Section when it has none. The loader
	// decodes the file against it, and the man page, the shipped file and
	// the reference describe it from here.
	Settings config.Section
	// AlsoReads names the general sections of the file the check reads
	// besides its own and checks.ID (qemu-guest-agent reads probe:).
	AlsoReads []string
	// DependsOn names checks that must pass first; when one of them does
	// not pass, this check is reported as skip with the reason. A
	// dependency that is not part of the run is not enforced.
	DependsOn []string
	// Codes describes every finding code the check can emit, in the
	// order of its reference page; the page's tables, explain and each
	// finding's fix come from it.
	Codes []Code
	// Pending lists the codes that mean the machine is still being
	// provisioned (cloud-init running): a readiness probe is not ready on
	// one of them whatever its status. The runner marks such findings.
	Pending []string
	// Run performs the check. It must honour ctx and return at least one
	// finding; returning none is reported as an error.
	Run func(ctx context.Context, env *Env) []Finding
}

// Sections names the sections of guestcheck.yaml the check reads besides
// checks.ID: its own, then AlsoReads.
func (c Check) Sections() []string {
	if c.Settings.Name == "" {
		return c.AlsoReads
	}
	return append([]string{c.Settings.Name}, c.AlsoReads...)
}

// The report's vocabulary, defined once in reportv1 so that the readers
// of reports (prove, fleet, the VM tests) decode the very types the runner
// fills.
type (
	// Status is the verdict of a finding or a check.
	Status = reportv1.Status
	// Finding is one judged fact, with its evidence and remediation.
	Finding = reportv1.Finding
	// Waived says which waiver accepted a finding, and why.
	Waived = reportv1.Waived
	// Result is the outcome of one check in a run.
	Result = reportv1.Result
)

// The statuses, from best to worst.
const (
	Pass  = reportv1.Pass
	Skip  = reportv1.Skip
	Warn  = reportv1.Warn
	Error = reportv1.Error
	Fail  = reportv1.Fail
)

// Statuses lists every valid status, best first.
var Statuses = reportv1.Statuses

// IsKebab reports whether s is a valid check ID or finding code: what
// the report's schema asks of one (reportv1.Patterns' kebab).
func IsKebab(s string) bool { return reportv1.Matches("kebab", s) }

// New returns a finding; d may be nil. It saves the struct literal noise in
// checks that build many findings.
func New(st Status, code, msg string, d map[string]string, fix string) Finding {
	return Finding{Status: st, Code: code, Message: msg, Detail: d, Remediation: fix}
}

// Passf returns a pass finding.
func Passf(code, msg string, d map[string]string) Finding {
	return Finding{Status: Pass, Code: code, Message: msg, Detail: d}
}

// Skipf returns a skip finding whose message is the reason.
func Skipf(code, reason string, d map[string]string) Finding {
	return Finding{Status: Skip, Code: code, Message: reason, Detail: d}
}

// Errorf returns an error finding: the check could not judge.
func Errorf(code, msg string, d map[string]string, fix string) Finding {
	return Finding{Status: Error, Code: code, Message: msg, Detail: d, Remediation: fix}
}

// Detail returns a copy of base with the key/value pairs kv added; a pair
// whose value is empty is left out, so that callers can pass optional
// evidence without an if. base is never changed: findings built from one
// shared base do not see each other's keys.
func Detail(base map[string]string, kv ...string) map[string]string {
	d := make(map[string]string, len(base)+len(kv)/2)
	maps.Copy(d, base)
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			d[kv[i]] = kv[i+1]
		}
	}
	return d
}
