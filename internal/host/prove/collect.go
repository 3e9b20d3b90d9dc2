package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// Guest paths prove reads through the agent, and their bounds.
const (
	ReportPath     = "/run/guestcheck/report.json"
	maxReport      = 4 << 20
	maxSmallFile   = 16 << 10
	guestcheckUnit = "/usr/lib/systemd/system/guestcheck.service"
)

// GuestReport is the part of guestcheck's JSON report (schema v1) prove
// uses: the verdict, the failing checks and, when guestcheck reports it,
// the identity.
type GuestReport struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Status        string `json:"status"`
	Summary       struct {
		Pass, Warn, Fail, Skip, Error int
	} `json:"summary"`
	Checks []struct {
		ID      string `json:"id"`
		Status  string `json:"status"`
		Summary string `json:"summary"`
	} `json:"checks"`
	Identity *guestid.Identity `json:"identity"`
}

// ParseGuestReport schema-checks a guestcheck report: schema_version 1,
// tool guestcheck, a known status.
func ParseGuestReport(b []byte) (GuestReport, error) {
	var r GuestReport
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("%s: not JSON: %v", ReportPath, err)
	}
	if r.SchemaVersion != 1 || r.Tool != "guestcheck" {
		return r, fmt.Errorf("%s: not a guestcheck schema 1 report (schema_version %d, tool %.40q)", ReportPath, r.SchemaVersion, r.Tool)
	}
	if !slices.Contains([]string{"pass", "warn", "fail", "error", "skip"}, r.Status) {
		return r, fmt.Errorf("%s: unknown status %.40q", ReportPath, r.Status)
	}
	return r, nil
}

// Verdict is the report's verdict in the console's words.
func (r GuestReport) Verdict() BootVerdict {
	s := r.Summary
	return BootVerdict{Status: strings.ToUpper(r.Status), Checks: len(r.Checks), Counts: map[string]int{
		"fail": s.Fail, "error": s.Error, "warn": s.Warn, "pass": s.Pass, "skip": s.Skip,
	}}
}

// CheckVerdict is one of guestcheck's checks on a clone.
type CheckVerdict struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Summary string `json:"summary"`
}

// CheckVerdicts lists the report's checks, their guest text cleaned and
// bounded.
func (r GuestReport) CheckVerdicts() []CheckVerdict {
	out := make([]CheckVerdict, 0, len(r.Checks))
	for _, c := range r.Checks {
		out = append(out, CheckVerdict{ID: clean(c.ID), Status: clean(c.Status), Summary: clean(c.Summary)})
	}
	return out
}

// Failing lists the checks that failed or could not run, "id: summary".
func (r GuestReport) Failing() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == "fail" || c.Status == "error" {
			out = append(out, clean(c.ID+": "+c.Summary))
		}
	}
	return out
}

// AgentIdentity reads a running clone's identity through the agent, for
// a guest whose guestcheck report carries none: guestid's reader, the one
// guestcheck itself uses, over the agent (agentFS), then the NICs from
// guest-network-get-interfaces and, when the files gave none, the agent's
// hostname. It also returns the machine-id as sealprep's template record
// hashes it, from the same read; the ID itself is never kept.
func AgentIdentity(ctx context.Context, a qga.Agent) (guestid.Identity, string) {
	id, sealHash := guestid.ReadWithRecordHash(agentFS{ctx: ctx, a: a}, true)
	id.Interfaces = nil
	if id.Hostname == "" {
		if h, err := qga.HostName(ctx, a); err == nil {
			id.Hostname = clean(h)
		}
	}
	ifs, err := qga.Interfaces(ctx, a)
	if err != nil {
		id.Unread = append(id.Unread, "interfaces: "+clean(err.Error()))
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
		g := guestid.Interface{Name: clean(i.Name), MAC: strings.ToLower(clean(i.HardwareAddress))}
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
