package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/report"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestWaiverExitCodes: through the whole command, a waived failure is in
// the report with its reason and exits 0 in both schemes; an expired
// waiver lets it count again and says so.
func TestWaiverExitCodes(t *testing.T) {
	a := fake("a", runner.Fail)
	a.Codes = []runner.Code{{ID: "a-code", Fix: "Fix a."}}
	all := []runner.Check{a, fake("b", runner.Pass)}
	for _, tc := range []struct {
		expires        string
		code, nagios   int
		waived, expire bool
	}{
		{"2999-01-01", report.ExitOK, report.NagiosOK, true, false},
		{"2000-01-01", report.ExitProblem, report.NagiosCritical, false, true},
	} {
		cfg := writeConfig(t, "waivers:\n  - {check: a, code: a-code, reason: \"known in the lab\", expires: "+tc.expires+"}\n")
		var out, errb bytes.Buffer
		code := run([]string{"--root", t.TempDir(), "--config", cfg, "--format", "json"}, &out, &errb, all)
		var rep report.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", errb.String(), err, out.String())
		}
		fs := rep.Checks[0].Findings
		if code != tc.code || (fs[0].Waived != nil) != tc.waived || fs[0].Status != runner.Fail {
			t.Errorf("expires %s: exit %d, finding %+v; want exit %d, waived %v", tc.expires, code, fs[0], tc.code, tc.waived)
		}
		if got := len(fs) == 2 && fs[1].Code == "waiver-expired"; got != tc.expire {
			t.Errorf("expires %s: findings %+v", tc.expires, fs)
		}
		out.Reset()
		code = run([]string{"--root", t.TempDir(), "--config", cfg, "--format", "nagios", "--exit-codes", "nagios"}, &out, &errb, all)
		if code != tc.nagios || tc.waived != strings.Contains(out.String(), "FAIL (waived) a: a-code") {
			t.Errorf("expires %s: nagios exit %d\n%s", tc.expires, code, out.String())
		}
	}
}
