// Package fleettest is the fleet tests' kit: guest reports for the tests
// and benchmarks of internal/host/fleet and cmd/guestcheck, so that both
// measure and bound against the same report, and the fake libvirtd that
// fleet's and freeze-drill's libvirt tests reach domains through.
package fleettest

import (
	"fmt"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// RealisticReport is a report the size of a real guest's: 20 checks of
// three findings each, with evidence (about 21 KiB), and identity id.
func RealisticReport(id *guestid.Identity) report.Report {
	var results []runner.Result
	for c := range 20 {
		var fs []runner.Finding
		for f := range 3 {
			fs = append(fs, runner.New(runner.Pass, fmt.Sprintf("check%d-finding%d", c, f), "the thing this check verifies is as declared, with some words",
				map[string]string{"path": "/etc/some/file", "value": strings.Repeat("x", 80), "source": "cloud-init"}, ""))
		}
		results = append(results, runner.Result{ID: fmt.Sprintf("check%d", c), Title: "A check", Status: runner.Pass, Summary: "ok", Findings: fs})
	}
	return report.New(results, report.Meta{Tool: "guestcheck", Version: "1.0.0", StartedAt: time.Unix(1764417600, 0), Identity: id})
}
