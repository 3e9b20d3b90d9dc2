// Package reportv1 is guestcheck's JSON report, schema version 1, as Go
// types: the one definition that guestcheck writes (through the runner
// and the report package), that sealprep prove and guestcheck fleet read
// from guests and that the VM tests assert on. Decode is the one reader,
// strict about what the schema fixes, for reports that come from a guest
// and so are hostile input.
//
// It imports nothing of the module, so that every layer may use it: the
// runner's Finding and Result, guestid's Identity and the report's Report
// are these types under their old names.
package reportv1

import (
	"fmt"
	"strings"
	"time"
)

// SchemaVersion is the version of the JSON report
// (schema/report-v1.schema.json). Changes within a version are additive
// only.
const SchemaVersion = 1

// Tool is the report's tool field.
const Tool = "guestcheck"

// Report is the whole result of one guestcheck run.
type Report struct {
	SchemaVersion int       `json:"schema_version" schema:"req,const=1"`
	Tool          string    `json:"tool" schema:"req,const=guestcheck"`
	Version       string    `json:"version" schema:"req,nonempty"`
	Host          Host      `json:"host" schema:"req"`
	Root          string    `json:"root" schema:"req" doc:"the directory read as the guest's /"`
	StartedAt     time.Time `json:"started_at" schema:"req"`
	DurationMS    int64     `json:"duration_ms" schema:"req,min=0"`
	Status        Status    `json:"status" schema:"req" doc:"worst check status; skip only when every check was skipped"`
	Summary       Summary   `json:"summary" schema:"req" doc:"number of checks per status"`
	Checks        []Result  `json:"checks" schema:"req"`
	// Identity is the guest's identity items, for comparing VMs: every
	// run of guestcheck fills it; the text formats leave it out.
	Identity *Identity `json:"identity,omitempty"`
}

// Host identifies the machine and boot the report describes.
type Host struct {
	Hostname string `json:"hostname" schema:"req" doc:"kernel hostname on the live system, /etc/hostname under --root"`
	BootID   string `json:"boot_id" schema:"req" doc:"/proc/sys/kernel/random/boot_id; empty under --root"`
}

// Summary counts checks per status, and the findings waivers accepted.
type Summary struct {
	Pass  int `json:"pass" schema:"req,min=0"`
	Warn  int `json:"warn" schema:"req,min=0"`
	Fail  int `json:"fail" schema:"req,min=0"`
	Skip  int `json:"skip" schema:"req,min=0"`
	Error int `json:"error" schema:"req,min=0"`
	// Waived counts findings (not checks) that a waiver accepted; each is
	// still in its check's findings, with its own status.
	Waived int `json:"waived,omitempty" schema:"min=1" doc:"number of findings (not checks) a configuration waiver accepted; absent when none"`
}

// Add counts one check of status st; an unknown status counts as an
// error.
func (s *Summary) Add(st Status) {
	switch st {
	case Pass:
		s.Pass++
	case Warn:
		s.Warn++
	case Fail:
		s.Fail++
	case Skip:
		s.Skip++
	default:
		s.Error++
	}
}

// Result is the outcome of one check in a run, and the report's entry for
// it: the runner fills Duration, and the JSON carries it as duration_ms.
type Result struct {
	ID       string        `json:"id" schema:"req,pattern=kebab"`
	Title    string        `json:"title" schema:"req,nonempty"`
	Status   Status        `json:"status" schema:"req"`
	Summary  string        `json:"summary" schema:"req"`
	Duration time.Duration `json:"-"`
	// DurationMS is Duration in whole milliseconds, as reports show it.
	DurationMS int64     `json:"duration_ms" schema:"req,min=0"`
	Findings   []Finding `json:"findings" schema:"req,minitems=1"`
}

// Check returns the result of check id, or nil.
func (r *Report) Check(id string) *Result {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// Finding returns the first finding with code, or nil; r may be nil.
func (r *Result) Finding(code string) *Finding {
	if r == nil {
		return nil
	}
	for i := range r.Findings {
		if r.Findings[i].Code == code {
			return &r.Findings[i]
		}
	}
	return nil
}

// Finding is one judged fact. Every finding that is not a pass carries a
// remediation sentence.
type Finding struct {
	Status Status `json:"status" schema:"req"`
	// Code is stable and kebab-case, e.g. "cloud-init-module-error".
	Code string `json:"code" schema:"req,pattern=kebab"`
	// Message is one line saying what was found.
	Message string `json:"message" schema:"req,nonempty"`
	// Detail is the evidence: which files, values and states led to the verdict.
	Detail map[string]string `json:"detail,omitempty"`
	// Remediation says how to fix it; empty only for passes and skips.
	Remediation string `json:"remediation,omitempty"`
	// Waived is set when a configuration waiver accepts this finding: it
	// keeps its status and is still reported, but counts as a pass for its
	// check and the exit code.
	Waived *Waived `json:"waived,omitempty"`
	// Pending is set by the runner on a finding whose check lists its
	// code as meaning "still provisioning"; reports do not show it, the
	// readiness probe reads it.
	Pending bool `json:"-"`
	// Reference is the installed reference page of the finding's check,
	// where its code's meaning and fix are (guestcheck explain CODE prints
	// the same entry); the report fills it in.
	Reference string `json:"reference,omitempty" doc:"the installed reference page of the finding's check (runner.md for the codes the runner reports on any check): its code's meaning and fix (guestcheck explain CODE)"`
}

// Waived says which waiver accepted a finding, and why.
type Waived struct {
	Reason string `json:"reason" schema:"req,nonempty"`
	// Expires is the waiver's expiry date (YYYY-MM-DD); empty for never.
	Expires string `json:"expires,omitempty" schema:"pattern=date" doc:"the day (00:00 UTC) the waiver stops applying; absent for never"`
}

// Counted is the status a finding counts with towards its check's status
// and the exit code: its own, or pass when it is waived.
func (f Finding) Counted() Status {
	if f.Waived != nil {
		return Pass
	}
	return f.Status
}

// String is r in a few lines for test and debug output: the check's
// status and summary, then each finding's.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", r.ID, r.Status, r.Summary)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n    %s %s: %s", f.Status, f.Code, f.Message)
	}
	return b.String()
}
