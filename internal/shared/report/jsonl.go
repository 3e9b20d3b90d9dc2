package report

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// FindingLine is one line of the jsonl format: a finding with the run and
// check it belongs to, so that each line stands alone in a log pipeline.
type FindingLine struct {
	Time        string            `json:"time"` // the run's start, RFC 3339 UTC
	Tool        string            `json:"tool"`
	Version     string            `json:"version"`
	Host        string            `json:"host"`
	BootID      string            `json:"boot_id"`
	Root        string            `json:"root"`
	Check       string            `json:"check"`
	CheckStatus runner.Status     `json:"check_status"`
	Status      runner.Status     `json:"status"`
	Priority    int               `json:"priority"` // syslog severity of Status
	Code        string            `json:"code"`
	Message     string            `json:"message"`
	Detail      map[string]string `json:"detail,omitempty"`
	Remediation string            `json:"remediation,omitempty"`
	Waived      *runner.Waived    `json:"waived,omitempty"`
	Reference   string            `json:"reference,omitempty"`
	// Identity is the report's identity, on every line: a line stands
	// alone in a log pipeline, as its host and boot_id do.
	Identity *guestid.Identity `json:"identity,omitempty"`
}

// syslogPriority maps a status onto the syslog severities journald and
// log shippers filter by: fail and error are err (3), warn is warning (4),
// pass and skip are info (6). WriteJSONL makes a waived warn, fail or
// error notice (5).
func syslogPriority(st runner.Status) int {
	switch valid(st) {
	case runner.Pass, runner.Skip:
		return 6
	case runner.Warn:
		return 4
	}
	return 3
}

// WriteJSONL renders r as JSON Lines: one compact object per finding, in
// report order. A check without findings (which the runner never
// produces) still gets one line, with its summary as the message.
func WriteJSONL(w io.Writer, r Report) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw) // Encode ends every object with a newline
	enc.SetEscapeHTML(false)
	base := FindingLine{Time: r.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z"), Tool: r.Tool,
		Version: r.Version, Host: r.Host.Hostname, BootID: r.Host.BootID, Root: r.Root, Identity: r.Identity}
	for _, c := range r.Checks {
		fs := c.Findings
		if len(fs) == 0 {
			fs = []runner.Finding{{Status: c.Status, Message: c.Summary}}
		}
		for _, f := range fs {
			l := base
			l.Check, l.CheckStatus = c.ID, c.Status
			l.Status, l.Priority, l.Code, l.Message = f.Status, syslogPriority(f.Status), f.Code, f.Message
			if f.Waived != nil && l.Priority < 5 {
				l.Priority = 5 // notice: accepted, not to be alerted on
			}
			l.Detail, l.Remediation, l.Waived, l.Reference = f.Detail, f.Remediation, f.Waived, f.Reference
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
