package reportv1

// FindingLine is one line of guestcheck's jsonl format
// (schema/finding-line-v1.schema.json): a finding with the run and
// check it belongs to, so that each line stands alone in a log pipeline.
type FindingLine struct {
	Time        string            `json:"time"` // the run's start, RFC 3339 UTC
	Tool        string            `json:"tool"`
	Version     string            `json:"version"`
	Host        string            `json:"host"`
	BootID      string            `json:"boot_id"`
	Root        string            `json:"root"`
	Check       string            `json:"check"`
	CheckStatus Status            `json:"check_status"`
	Status      Status            `json:"status"`
	Priority    int               `json:"priority"` // syslog severity of Status
	Code        string            `json:"code"`
	Message     string            `json:"message"`
	Detail      map[string]string `json:"detail,omitempty"`
	Remediation string            `json:"remediation,omitempty"`
	Waived      *Waived           `json:"waived,omitempty"`
	Reference   string            `json:"reference,omitempty"`
	// Identity is the report's identity, on every line: a line stands
	// alone in a log pipeline, as its host and boot_id do.
	Identity *Identity `json:"identity,omitempty"`
}
