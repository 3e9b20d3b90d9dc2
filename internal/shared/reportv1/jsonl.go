package reportv1

import "fmt"

// FindingLine is one line of guestcheck's jsonl format
// (schema/finding-line-v1.schema.json): a finding with the run and
// check it belongs to, so that each line stands alone in a log pipeline.
type FindingLine struct {
	Time        string            `json:"time" schema:"req,pattern=datetime" doc:"the run's start, UTC"` // the run's start, RFC 3339 UTC
	Tool        string            `json:"tool" schema:"req,const=guestcheck"`
	Version     string            `json:"version" schema:"req,nonempty"`
	Host        string            `json:"host" schema:"req" doc:"the report's host.hostname"`
	BootID      string            `json:"boot_id" schema:"req" doc:"the report's host.boot_id; empty under --root"`
	Root        string            `json:"root" schema:"req"`
	Check       string            `json:"check" schema:"req,pattern=kebab"`
	CheckStatus Status            `json:"check_status" schema:"req"`
	Status      Status            `json:"status" schema:"req"`
	Priority    int               `json:"priority" schema:"req,min=3" doc:"syslog severity of status: 3 fail and error, 4 warn, 6 pass and skip; 5 (notice) for a waived warn, fail or error"` // syslog severity of Status
	Code        string            `json:"code" schema:"req,pattern=kebab"`
	Message     string            `json:"message" schema:"req,nonempty"`
	Detail      map[string]string `json:"detail,omitempty"`
	Remediation string            `json:"remediation,omitempty"`
	Waived      *Waived           `json:"waived,omitempty"`
	Reference   string            `json:"reference,omitempty" doc:"the installed reference page of the finding's check, or runner.md for the codes the runner reports on any check (guestcheck explain CODE)"`
	// Identity is the report's identity, on every line: a line stands
	// alone in a log pipeline, as its host and boot_id do.
	Identity *Identity `json:"identity,omitempty" doc:"the report's identity object, the same on every line of a run"`
}

// Priority is the syslog severity of a finding line of status st,
// which journald and log shippers filter by: fail and error are err
// (3), warn is warning (4), pass and skip are info (6); a waived warn,
// fail or error is notice (5), accepted, not to be alerted on. An
// unknown status is err.
func Priority(st Status, waived bool) int {
	switch {
	case st == Pass || st == Skip:
		return 6
	case waived:
		return 5
	case st == Warn:
		return 4
	}
	return 3
}

// FindingLineTypes are the rules of a finding line's types: the
// report's, and what a line's status asks of its remediation and
// priority (Priority).
var FindingLineTypes = ReportTypes.With(Types{Type[FindingLine](): {
	Cond: `{"allOf": [
		{"if": {"properties": {"status": {"enum": ["warn", "fail", "error"]}}},
			"then": {"required": ["remediation"], "properties": {"remediation": {"minLength": 1}}}},
		{"if": {"properties": {"status": {"enum": ["fail", "error"]}}, "not": {"required": ["waived"]}}, "then": {"properties": {"priority": {"const": 3}}}},
		{"if": {"properties": {"status": {"const": "warn"}}, "not": {"required": ["waived"]}}, "then": {"properties": {"priority": {"const": 4}}}},
		{"if": {"properties": {"status": {"enum": ["warn", "fail", "error"]}}, "required": ["waived"]}, "then": {"properties": {"priority": {"const": 5}}}},
		{"if": {"properties": {"status": {"enum": ["pass", "skip"]}}}, "then": {"properties": {"priority": {"const": 6}}}}]}`,
	Check: func(v any) string {
		l := v.(*FindingLine)
		if l.Remediation == "" && (l.Status == Warn || l.Status == Fail || l.Status == Error) {
			return "a " + string(l.Status) + " finding without a remediation"
		}
		if want := Priority(l.Status, l.Waived != nil); l.Priority != want {
			return fmt.Sprintf("a %s finding of priority %d, not %d", l.Status, l.Priority, want)
		}
		return ""
	},
}})
