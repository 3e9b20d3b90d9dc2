package prove

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/fact/identity/sealrecord"
	"github.com/guestcheck/guestcheck/internal/host/qga"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// Guest paths prove reads through the agent, and their bounds.
const (
	ReportPath     = "/run/guestcheck/report.json"
	maxReport      = 4 << 20
	maxSmallFile   = 16 << 10
	guestcheckUnit = "/usr/lib/systemd/system/guestcheck.service"
)

// parseReport decodes and schema-checks guestcheck's report, as every
// reader of reports does (reportv1.Decode).
func parseReport(b []byte) (reportv1.Report, error) {
	r, err := reportv1.Decode(b)
	if err != nil {
		var ve *reportv1.VersionError
		if errors.As(err, &ve) {
			return r, fmt.Errorf("%s: %v: install the guestcheck of this sealprep's release in the template", ReportPath, err)
		}
		return r, fmt.Errorf("%s: %v", ReportPath, err)
	}
	return r, nil
}

// verdictOf is the report's verdict in the console's words.
func verdictOf(r reportv1.Report) BootVerdict {
	s := r.Summary
	return BootVerdict{Status: strings.ToUpper(string(r.Status)), Checks: len(r.Checks), Counts: Counts{
		Fail: s.Fail, Error: s.Error, Warn: s.Warn, Pass: s.Pass, Skip: s.Skip,
	}}
}

// CheckVerdict is one of guestcheck's checks on a clone.
type CheckVerdict struct {
	ID      string `json:"id" schema:"req,nonempty"`
	Status  string `json:"status" schema:"req,enum=pass|warn|fail|skip|error"`
	Summary string `json:"summary" schema:"req"`
	// Baseline is set when the check failed on BaselineCodes alone: a
	// security baseline's verdict, which does not fail the proof.
	Baseline bool `json:"baseline,omitempty" doc:"the check failed on baseline findings alone, which do not fail the proof"`
}

// BaselineCodes are guestcheck's finding codes that judge a security
// baseline (sshd's authentication settings), which the operator chooses
// per site, not the template's identity or health: prove reports them
// apart and does not fail a clone, or the template, for them.
var BaselineCodes = []string{"ssh-auth-baseline", "ssh-auth-conditional", "ssh-pwauth-unread"}

// checkVerdicts lists the report's checks, their guest text cleaned and
// bounded.
func checkVerdicts(r reportv1.Report) []CheckVerdict {
	out := make([]CheckVerdict, 0, len(r.Checks))
	for _, c := range r.Checks {
		out = append(out, CheckVerdict{ID: cleanLine(c.ID), Status: cleanLine(string(c.Status)), Summary: cleanLine(c.Summary), Baseline: baselineOnly(c)})
	}
	return out
}

// failing lists the checks that failed or could not run, "id: summary",
// but for those that failed on baseline findings alone.
func failing(r reportv1.Report) []string {
	var out []string
	for _, c := range r.Checks {
		if (c.Status == reportv1.Fail || c.Status == reportv1.Error) && !baselineOnly(c) {
			out = append(out, cleanLine(c.ID+": "+c.Summary))
		}
	}
	return out
}

// baselineFindings lists the findings of BaselineCodes that fail or
// could not be judged, "id: code: message", whatever else their check
// found.
func baselineFindings(r reportv1.Report) []string {
	var out []string
	for _, c := range r.Checks {
		for _, f := range c.Findings {
			if counts(f) && slices.Contains(BaselineCodes, f.Code) {
				out = append(out, cleanLine(c.ID+": "+f.Code+": "+f.Message))
			}
		}
	}
	return out
}

// baselineOnly reports whether c failed (or erred) and every finding that
// made it so is one of BaselineCodes.
func baselineOnly(c reportv1.Result) bool {
	if c.Status != reportv1.Fail && c.Status != reportv1.Error {
		return false
	}
	n := 0
	for _, f := range c.Findings {
		if !counts(f) {
			continue
		}
		if !slices.Contains(BaselineCodes, f.Code) {
			return false
		}
		n++
	}
	return n > 0
}

// counts reports whether f fails its check: a fail or an error that no
// waiver accepts.
func counts(f reportv1.Finding) bool {
	st := f.Counted()
	return st == reportv1.Fail || st == reportv1.Error
}

// AgentIdentity reads a running clone's identity through the agent, for
// a guest whose guestcheck report carries none: guestid's reader, the one
// guestcheck itself uses, over the agent (agentFS), then the NICs from
// guest-network-get-interfaces and, when the files gave none, the agent's
// hostname. It also returns the machine-id as sealprep's template record
// hashes it, from the same read; the ID itself is never kept.
func AgentIdentity(ctx context.Context, a qga.Agent) (guestid.Identity, sealrecord.IDHash) {
	id, sealHash := guestid.ReadWithRecordHash(agentFS{ctx: ctx, a: a}, true)
	id.Interfaces = nil
	if id.Hostname == "" {
		if h, err := qga.HostName(ctx, a); err == nil {
			id.Hostname = cleanLine(h)
		}
	}
	ifs, err := qga.Interfaces(ctx, a)
	if err != nil {
		id.Unread = append(id.Unread, "interfaces: "+cleanLine(err.Error()))
	}
	id.Interfaces = agentInterfaces(ifs)
	return id, sealHash
}

// agentInterfaces keeps the NICs (no loopback) and their global
// addresses.
func agentInterfaces(ifs []qga.Interface) []guestid.Interface {
	var out []guestid.Interface
	for _, i := range ifs {
		if i.Name == "lo" || i.HardwareAddress == "" || i.HardwareAddress == "00:00:00:00:00:00" {
			continue
		}
		g := guestid.Interface{Name: cleanLine(i.Name), MAC: strings.ToLower(cleanLine(i.HardwareAddress))}
		for _, a := range i.IPAddresses {
			ip, err := netip.ParseAddr(a.Address)
			if err != nil || !ip.IsGlobalUnicast() || ip.IsLinkLocalUnicast() {
				continue
			}
			g.Addresses = append(g.Addresses, netip.PrefixFrom(ip, a.Prefix).String())
		}
		out = append(out, g)
	}
	return out
}
