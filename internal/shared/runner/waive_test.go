package runner

import (
	"context"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// TestRunWaivers: a waived finding keeps its status, carries the reason
// and counts as a pass for its check; from the expiry date on the waiver
// no longer applies and the check says it expired.
func TestRunWaivers(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse("g.yaml", []byte(`waivers:
  - {check: time-sync, code: unsynced, reason: "no NTP on the test network", expires: 2027-03-01}
  - {check: other, code: bad, reason: lab}
`))
	if err != nil {
		t.Fatal(err)
	}
	checks := []Check{
		{ID: "time-sync", Codes: codesOf("unsynced", "ok"), Run: fixed(New(Fail, "unsynced", "the clock is not synchronised", nil, "start chrony"))},
		{ID: "other", Codes: codesOf("bad"), Run: fixed(Passf("fine", "all fine", nil))},
		{ID: "dependant", DependsOn: []string{"time-sync"}, Run: fixed(Passf("ok", "ran", nil))},
	}
	before := func() time.Time { return time.Date(2027, 2, 28, 23, 59, 0, 0, time.UTC) }
	rs := Run(context.Background(), checks, &Env{Config: cfg, Now: before}, opts(time.Second))
	f := rs[0].Findings[0]
	if rs[0].Status != Pass || f.Status != Fail || f.Waived == nil || f.Waived.Reason != "no NTP on the test network" || f.Waived.Expires != "2027-03-01" {
		t.Errorf("waived: check %s, finding %+v", rs[0].Status, f)
	}
	if want := "the clock is not synchronised (fail, waived: no NTP on the test network)"; rs[0].Summary != want {
		t.Errorf("summary %q, want %q", rs[0].Summary, want)
	}
	if rs[1].Status != Pass || len(rs[1].Findings) != 1 || rs[1].Findings[0].Waived != nil {
		t.Errorf("a waiver of a code not found changes nothing: %+v", rs[1])
	}
	if rs[2].Status != Pass {
		t.Errorf("a dependency passing by a waiver: dependant %s", rs[2].Status)
	}

	on := func() time.Time { return time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC) }
	rs = Run(context.Background(), checks, &Env{Config: cfg, Now: on}, opts(time.Second))
	fs := rs[0].Findings
	if rs[0].Status != Fail || fs[0].Waived != nil || len(fs) != 2 || fs[1].Code != codeWaiverExpired.ID || fs[1].Status != Warn {
		t.Fatalf("expired: %s %+v", rs[0].Status, fs)
	}
	if want := "the waiver of unsynced (no NTP on the test network) expired on 2027-03-01: the finding counts again"; fs[1].Message != want {
		t.Errorf("expired message %q, want %q", fs[1].Message, want)
	}
	if fs[1].Detail["where"] != "g.yaml:2" {
		t.Errorf("expired detail %v", fs[1].Detail)
	}
}
