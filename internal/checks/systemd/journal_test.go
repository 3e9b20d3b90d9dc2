package systemd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// entry is a journal entry of PID 1 with message msg.
func entry(msg string, kv ...string) systemdfact.JournalEntry {
	e := systemdfact.JournalEntry{Fields: map[string][]string{"MESSAGE": {msg}, "_PID": {"1"}, "PRIORITY": {"4"}}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Fields[kv[i]] = append(e.Fields[kv[i]], kv[i+1])
	}
	return e
}

// kmsg is how journald stores a message PID 1 wrote to the kernel log
// before journald ran (the boot transaction): the "systemd[1]: " prefix
// becomes SYSLOG_IDENTIFIER and SYSLOG_PID, there is no _PID and no UNIT=.
func kmsg(msg string) systemdfact.JournalEntry {
	return systemdfact.JournalEntry{Fields: map[string][]string{"MESSAGE": {msg}, "_TRANSPORT": {"kernel"},
		"SYSLOG_IDENTIFIER": {"systemd"}, "SYSLOG_PID": {"1"}, "PRIORITY": {"4"}}}
}

// TestCyclesFromCapture reads what journalctl printed for CycleQuery in
// the VM tests' broken Debian 12 guest (systemd 252), where runcmd starts
// gc-cycle-a.service (Wants= and After= gc-cycle-b.service, which is
// After= gc-cycle-a.service). Captured with GUESTCHECK_VM_CAPTURE (see
// test/vm/template_test.go expectCycle).
func TestCyclesFromCapture(t *testing.T) {
	f, err := os.Open("testdata/debian12-broken-cycle-journal.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, err := systemdfact.ParseJournalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	cs := CyclesFromJournal(es)
	if len(cs) != 1 {
		t.Fatalf("cycles %+v, want 1", cs)
	}
	c := cs[0]
	if c.Deleted != "gc-cycle-b.service/start" || c.Start != "gc-cycle-b.service/start" || c.Times != 1 || c.First.IsZero() {
		t.Errorf("cycle %+v", c)
	}
	if j := slices.Sorted(slices.Values(c.Jobs)); !slices.Equal(j, []string{"gc-cycle-a.service/start", "gc-cycle-b.service/start"}) {
		t.Errorf("jobs %q", c.Jobs)
	}
	out := JudgeJournalCycles(JournalFacts{Cycles: cs, Entries: len(es), Visible: true})
	validate(t, out)
	got := want(t, out, CodeJournalCycleBroken.ID, runner.Fail, "deleted job gc-cycle-b.service/start", "so gc-cycle-b.service was not started")
	if got.Detail["unit"] != "gc-cycle-b.service" || got.Detail["journal"] != "journalctl -b -u gc-cycle-b.service" {
		t.Errorf("detail %v", got.Detail)
	}
	for _, w := range []string{"`journalctl -b -u gc-cycle-b.service`", "`systemd-analyze verify gc-cycle-b.service`"} {
		if !strings.Contains(got.Remediation, w) {
			t.Errorf("remediation %q lacks %s", got.Remediation, w)
		}
	}
}

func TestCyclesFromJournal(t *testing.T) {
	boot := []systemdfact.JournalEntry{
		kmsg("basic.target: Found ordering cycle on sysinit.target/start"),
		kmsg("basic.target: Found dependency on local-fs.target/start"),
		kmsg("basic.target: Found dependency on data.mount/start"),
		kmsg("basic.target: Found dependency on basic.target/start"),
		kmsg("basic.target: Job local-fs.target/start deleted to break ordering cycle starting with basic.target/start"),
		entry("Started ssh.service - OpenBSD Secure Shell server."),
	}
	// The same cycle met by a later transaction, and one systemd could
	// not break.
	again := append(slices.Clone(boot[:5]), entry("x.service: Found ordering cycle on y.service/start", "UNIT", "x.service", "UNIT", "y.service"),
		entry("x.service: Found dependency on x.service/start", "UNIT", "x.service", "UNIT", "y.service"),
		entry("x.service: Unable to break cycle starting with x.service/start", "UNIT", "x.service", "UNIT", "y.service"))
	cs := CyclesFromJournal(append(boot, again...))
	if len(cs) != 2 {
		t.Fatalf("cycles %+v, want 2", cs)
	}
	if c := cs[0]; c.Deleted != "local-fs.target/start" || c.Start != "basic.target/start" || c.Times != 2 ||
		!slices.Equal(c.Jobs, []string{"sysinit.target/start", "local-fs.target/start", "data.mount/start", "basic.target/start"}) {
		t.Errorf("boot cycle %+v", c)
	}
	if c := cs[1]; c.Deleted != "" || c.Start != "x.service/start" || c.Times != 1 {
		t.Errorf("unbreakable cycle %+v", c)
	}
	out := JudgeJournalCycles(JournalFacts{Cycles: cs, Visible: true})
	validate(t, out)
	want(t, out, CodeJournalCycleBroken.ID, runner.Fail, "deleted job local-fs.target/start", "sysinit.target/start -> local-fs.target/start -> data.mount/start -> basic.target/start")
	u := want(t, out, CodeJournalCycleUnbroken.ID, runner.Fail, "starting with x.service/start")
	if !strings.Contains(u.Remediation, "systemd-analyze verify x.service") {
		t.Errorf("remediation %q", u.Remediation)
	}

	// Only the closing message kept (journald rate-limited the rest): the
	// UNIT= fields name the cycle.
	cs = CyclesFromJournal([]systemdfact.JournalEntry{entry("a.service: Job b.service/start deleted to break ordering cycle starting with a.service/start",
		"UNIT", "a.service", "UNIT", "b.service")})
	if len(cs) != 1 || !slices.Equal(cs[0].Jobs, []string{"a.service", "b.service"}) || cs[0].DeletedUnit() != "b.service" {
		t.Errorf("closing message alone: %+v", cs)
	}
	// systemd 258 and later tag the messages with IDs.
	cs = CyclesFromJournal([]systemdfact.JournalEntry{
		entry("a.service: Found ordering cycle on b.service/start", "MESSAGE_ID", msgIDOrderingCycle),
		entry("a.service: Found dependency on a.service/start"),
		entry("a.service: Job b.service/start deleted to break ordering cycle starting with a.service/start", "MESSAGE_ID", "50843675-42f7-472d-bc6a-94125d5debce"),
	})
	if len(cs) != 1 || cs[0].Deleted != "b.service/start" || len(cs[0].Jobs) != 2 {
		t.Errorf("with message IDs: %+v", cs)
	}
	// Other warnings of PID 1 are no cycle.
	if cs := CyclesFromJournal([]systemdfact.JournalEntry{entry("Failed to start gc-false.service."), entry("ordering cycle mentioned in passing")}); len(cs) != 0 {
		t.Errorf("cycles from unrelated messages: %+v", cs)
	}
}

func TestJudgeJournalCyclesCannotRead(t *testing.T) {
	for _, tc := range []struct {
		j    JournalFacts
		code runner.Code
		st   runner.Status
		sub  string
	}{
		{JournalFacts{Err: fmt.Errorf("look up: %w", systemdfact.ErrNoJournalctl)}, CodeJournalUnavailable, runner.Skip, "journalctl is not installed"},
		{JournalFacts{Err: errors.New("/usr/bin/journalctl -b: no answer within 10s: context deadline exceeded")}, CodeJournalUnreadable, runner.Error, "no answer within 10s"},
		{JournalFacts{Err: errors.New("exit status 1:\nFailed to open journal")}, CodeJournalUnreadable, runner.Error, "exit status 1: Failed"},
		{JournalFacts{}, CodeJournalUnavailable, runner.Skip, "no message of systemd (PID 1)"},
		{JournalFacts{Visible: true, Entries: 2}, CodeJournalNoCycle, runner.Pass, "no ordering cycle this boot"},
	} {
		out := JudgeJournalCycles(tc.j)
		validate(t, out)
		if len(out) != 1 {
			t.Errorf("%+v: %d findings", tc.j, len(out))
		}
		want(t, out, tc.code.ID, tc.st, tc.sub)
	}
}

// journalFake answers BootJournal like journalctl would for each query
// and records the queries.
type journalFake struct {
	unitsOnly
	answers map[string][]systemdfact.JournalEntry
	err     error
	asked   *[]string
}

func (j journalFake) BootJournal(ctx context.Context, args ...string) ([]systemdfact.JournalEntry, error) {
	*j.asked = append(*j.asked, strings.Join(args, " "))
	if j.err != nil {
		return nil, j.err
	}
	return j.answers[args[0]], nil
}

func TestGatherJournal(t *testing.T) {
	var asked []string
	cycle := []systemdfact.JournalEntry{
		entry("a.service: Found ordering cycle on b.service/start"),
		entry("a.service: Job b.service/start deleted to break ordering cycle starting with a.service/start"),
	}
	env := &runner.Env{Live: true, Systemd: journalFake{answers: map[string][]systemdfact.JournalEntry{"-p": cycle}, asked: &asked}}
	j := gatherJournal(context.Background(), env)
	if len(j.Cycles) != 1 || !j.Visible || j.Err != nil || len(asked) != 1 || asked[0] != strings.Join(CycleQuery, " ") {
		t.Errorf("with a cycle: %+v, asked %q", j, asked)
	}

	// No cycle message: PID 1 must be seen at all before that counts.
	asked = nil
	env.Systemd = journalFake{answers: map[string][]systemdfact.JournalEntry{"-n": {entry("Startup finished in 2s.")}}, asked: &asked}
	j = gatherJournal(context.Background(), env)
	if !j.Visible || len(j.Cycles) != 0 || len(asked) != 2 || asked[1] != strings.Join(VisibleQuery, " ") {
		t.Errorf("no cycle: %+v, asked %q", j, asked)
	}
	asked = nil
	env.Systemd = journalFake{answers: map[string][]systemdfact.JournalEntry{}, asked: &asked}
	if j = gatherJournal(context.Background(), env); j.Visible {
		t.Errorf("nothing visible: %+v", j)
	}
	env.Systemd = journalFake{err: systemdfact.ErrNoJournalctl, asked: &asked}
	if j = gatherJournal(context.Background(), env); !errors.Is(j.Err, systemdfact.ErrNoJournalctl) {
		t.Errorf("no journalctl: %+v", j)
	}
	env.Systemd = unitsOnly{}
	if j = gatherJournal(context.Background(), env); j.Err == nil {
		t.Errorf("a client without a journal: %+v", j)
	}
}

// The query holds both transports of PID 1's messages and a priority
// that keeps the cycle messages (warning and error).
func TestCycleQuery(t *testing.T) {
	q := strings.Join(CycleQuery, " ")
	for _, w := range []string{"-p warning", "_PID=1 + _TRANSPORT=kernel SYSLOG_IDENTIFIER=systemd SYSLOG_PID=1", "MESSAGE,MESSAGE_ID"} {
		if !strings.Contains(q, w) {
			t.Errorf("CycleQuery %q lacks %q", q, w)
		}
	}
}
