package report

import (
	"bufio"
	"encoding/json"
	"io"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// FindingLine is one line of the jsonl format (reportv1.FindingLine).
type FindingLine = reportv1.FindingLine

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
			l.Status, l.Priority, l.Code, l.Message = f.Status, reportv1.Priority(valid(f.Status), f.Waived != nil), f.Code, f.Message
			l.Detail, l.Remediation, l.Waived, l.Reference = f.Detail, f.Remediation, f.Waived, f.Reference
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
