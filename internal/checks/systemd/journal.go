package systemd

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// CycleQuery is the journalctl filter for systemd's ordering-cycle
// messages of this boot (RunJournalctl adds -b and -o json): PID 1's
// messages at warning or worse ("Found ordering cycle" is a warning, the
// deleted job an error), over the journal (_PID=1) or, for the boot
// transaction that PID 1 computes before journald runs, from the kernel
// log that journald imports (no _PID there: SYSLOG_IDENTIFIER and
// SYSLOG_PID from the "systemd[1]:" prefix). The messages are recognised
// here, not with --grep: that needs journalctl's optional pcre2, and
// systemd gave these messages MESSAGE_IDs only after the releases that
// Debian 12 and 13 ship (252, 257), so both the IDs and the text are
// matched.
var CycleQuery = []string{"-p", "warning",
	"--output-fields=MESSAGE,MESSAGE_ID,PRIORITY,UNIT,SYSLOG_IDENTIFIER,SYSLOG_PID,_PID,_TRANSPORT",
	"_PID=1", "+", "_TRANSPORT=kernel", "SYSLOG_IDENTIFIER=systemd", "SYSLOG_PID=1"}

// VisibleQuery asks for PID 1's last message of this boot: none means the
// journal is not readable here (a user outside the systemd-journal and
// adm groups sees only their own messages) or keeps nothing, and the
// absence of cycle messages proves nothing.
var VisibleQuery = []string{"-n", "1", "--output-fields=MESSAGE", "_PID=1"}

// systemd's message IDs for these messages (sd-messages.h, systemd 258
// and later).
const (
	msgIDOrderingCycle = "f27a3f94406a4783b946a9bc849e9452"
	msgIDDeletingJob   = "5084367542f7472dbc6a94125d5debce"
	msgIDCantBreak     = "b3112ddad19045538c76685ba5918a80"
)

// cycleRes are the messages of src/core/transaction.c, each after the
// "UNIT: " prefix of LOG_UNIT_MESSAGE. Compiled on first use: every
// guestcheck process (an exec probe too) would pay for them at start-up.
var cycleRes = sync.OnceValue(func() cycleREs {
	return cycleREs{
		foundCycle: regexp.MustCompile(`^(?:\S+: )?Found ordering cycle on (\S+)/(\S+)$`),
		foundDep:   regexp.MustCompile(`^(?:\S+: )?Found dependency on (\S+)/(\S+)$`),
		deleted:    regexp.MustCompile(`^(?:\S+: )?Job (\S+)/(\S+) deleted to break ordering cycle starting with (\S+)/(\S+)$`),
		cantBreak:  regexp.MustCompile(`^(?:\S+: )?Unable to break cycle starting with (\S+)/(\S+)$`),
	}
})

type cycleREs struct{ foundCycle, foundDep, deleted, cantBreak *regexp.Regexp }

// BrokenCycle is one ordering cycle systemd met this boot, from its
// journal messages.
type BrokenCycle struct {
	// Jobs are the cycle's jobs as systemd listed them ("a.service/start"),
	// first the one it found the cycle on.
	Jobs []string
	// Start is the job the cycle starts with.
	Start string
	// Deleted is the job systemd deleted to break the cycle; "" when it
	// could not break it (the whole request failed).
	Deleted string
	// First is when it was first logged; Times how often it was logged
	// (every transaction that meets the cycle logs it again).
	First time.Time
	Times int
}

// DeletedUnit is the unit whose job was deleted ("" when none).
func (c BrokenCycle) DeletedUnit() string {
	u, _, _ := strings.Cut(c.Deleted, "/")
	return u
}

// StartUnit is the unit of the job the cycle starts with.
func (c BrokenCycle) StartUnit() string {
	u, _, _ := strings.Cut(c.Start, "/")
	return u
}

func (c BrokenCycle) key() string {
	jobs := append([]string(nil), c.Jobs...)
	sort.Strings(jobs)
	return c.Deleted + "|" + c.Start + "|" + strings.Join(jobs, " ")
}

// CyclesFromJournal groups systemd's cycle messages, in journal order,
// into cycles: "Found ordering cycle on J" opens one, "Found dependency
// on K" adds to it, "Job X deleted to break ordering cycle starting with
// J" or "Unable to break cycle starting with J" closes it. Messages that
// are none of these are ignored; a cycle whose closing message is missing
// (journald dropped it) is kept with what was logged. Identical cycles
// are counted once.
func CyclesFromJournal(es []systemdfact.JournalEntry) []BrokenCycle {
	var out []BrokenCycle
	index := map[string]int{}
	var cur *BrokenCycle
	flush := func() {
		if cur == nil {
			return
		}
		if cur.Start == "" && len(cur.Jobs) > 0 {
			cur.Start = cur.Jobs[0]
		}
		k := cur.key()
		if i, ok := index[k]; ok {
			out[i].Times++
		} else {
			cur.Times = 1
			index[k] = len(out)
			out = append(out, *cur)
		}
		cur = nil
	}
	re := cycleRes()
	for _, e := range es {
		msg := strings.TrimSpace(e.Get("MESSAGE"))
		id := strings.ToLower(strings.ReplaceAll(e.Get("MESSAGE_ID"), "-", ""))
		switch m := (matcher{msg, id}); {
		case m.is(re.foundCycle, msgIDOrderingCycle):
			flush()
			cur = &BrokenCycle{First: e.Realtime()}
			if g := re.foundCycle.FindStringSubmatch(msg); g != nil {
				cur.Jobs = append(cur.Jobs, g[1]+"/"+g[2])
			}
		case re.foundDep.MatchString(msg):
			if cur == nil {
				cur = &BrokenCycle{First: e.Realtime()}
			}
			g := re.foundDep.FindStringSubmatch(msg)
			cur.Jobs = append(cur.Jobs, g[1]+"/"+g[2])
		case m.is(re.deleted, msgIDDeletingJob), m.is(re.cantBreak, msgIDCantBreak):
			if cur == nil {
				cur = &BrokenCycle{First: e.Realtime()}
			}
			if g := re.deleted.FindStringSubmatch(msg); g != nil {
				cur.Deleted, cur.Start = g[1]+"/"+g[2], g[3]+"/"+g[4]
			} else if g := re.cantBreak.FindStringSubmatch(msg); g != nil {
				cur.Start = g[1] + "/" + g[2]
			}
			if len(cur.Jobs) == 0 {
				// Only the closing message survived: the UNIT= fields
				// still list the cycle's units.
				cur.Jobs = append(cur.Jobs, e.All("UNIT")...)
			}
			flush()
		}
	}
	flush()
	return out
}

// matcher tells a message by its ID when systemd gave it one, else by its
// text.
type matcher struct{ msg, id string }

func (m matcher) is(re *regexp.Regexp, id string) bool {
	return m.id == id || re.MatchString(m.msg)
}

// JournalFacts is what the journal says about ordering cycles this boot.
type JournalFacts struct {
	// Cycles are the cycles systemd met this boot.
	Cycles []BrokenCycle
	// Entries is how many cycle-query entries journalctl returned.
	Entries int
	// Visible is false when the journal showed no message of PID 1 at all
	// this boot: nothing can be concluded from an empty answer then.
	Visible bool
	// Err is why the journal could not be read (journalctl missing, a
	// deadline, a failure); wraps systemdfact.ErrNoJournalctl when it is not
	// installed.
	Err error
	// Took is how long the journalctl runs took, for the evidence: they
	// run beside the unit reads and share the guest's CPU with them.
	Took time.Duration
	// IsRoot is true when guestcheck runs as root, who sees the whole
	// journal: an empty one then is not a matter of privilege.
	IsRoot bool
}

// gatherJournal reads the journal side of the facts.
func gatherJournal(ctx context.Context, env *runner.Env) JournalFacts {
	jr, ok := env.Systemd.(systemdfact.JournalReader)
	if !ok {
		return JournalFacts{Err: errors.New("the systemd client cannot read the journal")}
	}
	start := time.Now()
	es, err := jr.BootJournal(ctx, CycleQuery...)
	if err != nil {
		return JournalFacts{Err: err, Took: time.Since(start)}
	}
	jf := JournalFacts{Entries: len(es), Cycles: CyclesFromJournal(es)}
	if len(jf.Cycles) > 0 {
		jf.Visible, jf.Took = true, time.Since(start)
		return jf
	}
	vs, err := jr.BootJournal(ctx, VisibleQuery...)
	if err != nil {
		return JournalFacts{Err: err, Took: time.Since(start)}
	}
	jf.Visible, jf.Took, jf.IsRoot = len(vs) > 0, time.Since(start), env.IsRoot
	return jf
}

// journalCmd is the command the findings point to.
const journalCmd = "journalctl -b _PID=1 + _TRANSPORT=kernel SYSLOG_PID=1 | grep -i 'ordering cycle'"

// JudgeJournalCycles reports the ordering cycles systemd met this boot, as
// its journal tells: each is a fail naming the unit whose job systemd
// deleted (that unit did not start) and the cycle. A journal that cannot
// be read is a skip (journalctl missing, or nothing of PID 1 visible) or
// an error (journalctl failed or hung), never a pass.
func JudgeJournalCycles(j JournalFacts) []runner.Finding {
	switch {
	case errors.Is(j.Err, systemdfact.ErrNoJournalctl):
		return []runner.Finding{CodeJournalUnavailable.New(runner.Skip,
			"this boot's journal not read for ordering cycles: journalctl is not installed", map[string]string{"error": j.Err.Error()},
			CodeJournalUnavailable.CaseFix("when journalctl is not installed"))}
	case j.Err != nil:
		return []runner.Finding{CodeJournalUnreadable.New(runner.Error,
			"cannot read this boot's journal for ordering cycles: "+problem.OneLine(j.Err.Error()),
			map[string]string{"error": j.Err.Error(), "query": journalCmd, "read_in": j.Took.Round(time.Millisecond).String()},
			CodeJournalUnreadable.Fixf())}
	case !j.Visible:
		fix := CodeJournalUnavailable.Fixf()
		if j.IsRoot {
			fix = CodeJournalUnavailable.CaseFix("when guestcheck runs as root")
		}
		return []runner.Finding{CodeJournalUnavailable.New(runner.Skip,
			"this boot's journal not read for ordering cycles: it shows no message of systemd (PID 1)",
			map[string]string{"query": "journalctl -b -n 1 _PID=1"}, fix)}
	}
	took := j.Took.Round(time.Millisecond).String()
	if len(j.Cycles) == 0 {
		return []runner.Finding{runner.Passf(CodeJournalNoCycle.ID, "systemd met no ordering cycle this boot (its journal)",
			map[string]string{"entries_read": strconv.Itoa(j.Entries), "query": journalCmd, "read_in": took})}
	}
	var out []runner.Finding
	for _, c := range j.Cycles {
		cycle := strings.Join(c.Jobs, " -> ")
		d := map[string]string{"cycle": cycle, "start": c.Start, "times_logged": strconv.Itoa(c.Times), "query": journalCmd, "read_in": took}
		if !c.First.IsZero() {
			d["first_logged"] = c.First.Format(time.RFC3339)
		}
		verify := c.StartUnit()
		if c.Deleted == "" {
			d["unit"] = verify
			d["journal"] = "journalctl -b -u " + verify
			out = append(out, CodeJournalCycleUnbroken.New(runner.Fail,
				fmt.Sprintf("this boot systemd could not break an ordering cycle starting with %s (%s): the request to start it failed", c.Start, cycle), d,
				CodeJournalCycleUnbroken.Fixf("unit", verify)))
			continue
		}
		u := c.DeletedUnit()
		d["unit"], d["deleted_job"], d["journal"] = u, c.Deleted, "journalctl -b -u "+u
		out = append(out, CodeJournalCycleBroken.New(runner.Fail,
			fmt.Sprintf("this boot systemd deleted job %s to break an ordering cycle (%s), so %s was not started by that request", c.Deleted, cycle, u), d,
			CodeJournalCycleBroken.Fixf("unit", u)))
	}
	return out
}
