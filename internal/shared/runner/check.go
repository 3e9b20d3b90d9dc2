package runner

import (
	"context"
	"regexp"
	"sync"
	"time"
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
	// DependsOn names checks that must pass first; when one of them does
	// not pass, this check is reported as skip with the reason. A
	// dependency that is not part of the run is not enforced.
	DependsOn []string
	// Codes lists every finding code the check can emit; tests hold the
	// check and the reference documentation to it.
	Codes []string
	// Pending lists the codes that mean the machine is still being
	// provisioned (cloud-init running): a readiness probe is not ready on
	// one of them whatever its status. The runner marks such findings.
	Pending []string
	// Run performs the check. It must honour ctx and return at least one
	// finding; returning none is reported as an error.
	Run func(ctx context.Context, env *Env) []Finding
}

// Finding is one judged fact. Every finding that is not a pass carries a
// remediation sentence.
type Finding struct {
	Status Status `json:"status"`
	// Code is stable and kebab-case, e.g. "cloud-init-module-error".
	Code string `json:"code"`
	// Message is one line saying what was found.
	Message string `json:"message"`
	// Detail is the evidence: which files, values and states led to the verdict.
	Detail map[string]string `json:"detail,omitempty"`
	// Remediation says how to fix it; empty only for passes and skips.
	Remediation string `json:"remediation,omitempty"`
	// Waived is set when a configuration waiver accepts this finding: it
	// keeps its status and is still reported, but counts as a pass for its
	// check and the exit code.
	Waived *Waived `json:"waived,omitempty"`
	// Pending is set by the runner on a finding whose code the check lists
	// in Check.Pending; reports do not show it, the probe reads it.
	Pending bool `json:"-"`
	// Reference is the installed reference page of the finding's check,
	// where its code's meaning and fix are (guestcheck explain CODE prints
	// the same entry); the report fills it in.
	Reference string `json:"reference,omitempty"`
}

// Waived says which waiver accepted a finding, and why.
type Waived struct {
	Reason string `json:"reason"`
	// Expires is the waiver's expiry date (YYYY-MM-DD); empty for never.
	Expires string `json:"expires,omitempty"`
}

// Counted is the status a finding counts with towards its check's status
// and the exit code: its own, or pass when it is waived.
func (f Finding) Counted() Status {
	if f.Waived != nil {
		return Pass
	}
	return f.Status
}

// Result is the outcome of one check in a run, and the report's entry for
// it: the runner fills Duration, and the report's JSON carries it as
// duration_ms.
type Result struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Status   Status        `json:"status"`
	Summary  string        `json:"summary"`
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in whole milliseconds, as reports show it.
	DurationMS int64     `json:"duration_ms"`
	Findings   []Finding `json:"findings"`
}

var kebab = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// IsKebab reports whether s is a valid check ID or finding code.
func IsKebab(s string) bool { return kebab().MatchString(s) }

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
	for k, v := range base {
		d[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			d[kv[i]] = kv[i+1]
		}
	}
	return d
}
