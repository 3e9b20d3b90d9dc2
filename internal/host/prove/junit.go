package prove

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/junitxml"
)

// WriteJUnit renders the report for a CI page: a suite "clones" with,
// per clone, a test case "boots" (it came up and was judged) and one per
// guestcheck check as the clone's report gave it (a check that failed
// fails, one that could not judge is an error; warn passes, as prove
// passes it) or, when only the console's summary came, one case for the
// verdict; and a suite "identity" with one test case per identity item
// (no two clones, and no clone and the template, share it). A failure's
// text holds the message, the fix and, for a clone that did not boot, the
// console tail; an item that was not compared is skipped.
func WriteJUnit(w io.Writer, r Report) error {
	r = clean.Value(r) // guests' text, as every output shows it
	ts := junitxml.Timestamp(r.StartedAt)
	// The report names no host, so both suites take the schema's
	// "localhost".
	props := []junitxml.Property{{Name: "image", Value: r.Image.File}, {Name: "accel", Value: r.Accel},
		{Name: "firmware", Value: r.Firmware}, {Name: "version", Value: r.Version}}
	clones := junitxml.Suite{Name: "clones", Package: "sealprep.prove", ID: 0, Timestamp: ts, Hostname: junitxml.Hostname(""), Props: props,
		Time: junitxml.Seconds(r.DurationMS)}
	for _, c := range r.Clones {
		clones.Add(bootCase(c))
		for _, tc := range checkCases(c) {
			clones.Add(tc)
		}
		if tc, ok := budgetCase(c.Name, "", c.BootTime, r.BootBudgetMS); ok {
			clones.Add(tc)
		}
		for _, tc := range rebootCases(c) {
			clones.Add(tc)
		}
		if c.Reboot != nil {
			if tc, ok := budgetCase(c.Name, StepReboot, c.Reboot.BootTime, r.BootBudgetMS); ok {
				clones.Add(tc)
			}
		}
	}
	for _, c := range r.Copies {
		for _, tc := range copyCases(c, r.Failures) {
			clones.Add(tc)
		}
	}
	ident := junitxml.Suite{Name: "identity", Package: "sealprep.prove", ID: 1, Timestamp: ts, Hostname: junitxml.Hostname(""), Props: props,
		Time: junitxml.Seconds(0)}
	for _, it := range r.Items {
		tc := junitxml.Case{Name: string(it.Item) + ": not shared", Classname: "sealprep.prove.identity", Time: "0"}
		switch it.Status {
		case ItemShared:
			var body strings.Builder
			for _, f := range r.Failures {
				if f.Item == it.Item && f.Step == "" {
					fmt.Fprintf(&body, "%s\nfix: %s\n", f.Message, f.Fix)
				}
			}
			tc.Failure = &junitxml.Problem{Type: "fail", Message: string(it.Item) + " " + it.Detail, Body: junitxml.Body(body.String())}
		case ItemNotCompared:
			tc.Skipped = &junitxml.Skipped{Message: it.Detail}
		}
		ident.Add(tc)
	}
	return junitxml.Write(w, junitxml.Suites{Suites: []junitxml.Suite{clones, ident}})
}

func (t Timings) total() int64 { return t.Seed + t.Boot + t.CloudInit + t.Guestcheck + t.Collection }

// bootCase is "clone-N: boots": the clone came up and was judged.
func bootCase(c CloneResult) junitxml.Case {
	tc := junitxml.Case{Name: c.Name + ": boots", Classname: "sealprep.prove.clones." + c.Name, Time: junitxml.Seconds(c.Timings.total())}
	if why := bootFailed(c); why != "" {
		body := why + "\nfix: " + cloneFix(c) + "\n"
		if len(c.ConsoleTail) > 0 {
			body += "console tail:\n  " + strings.Join(c.ConsoleTail, "\n  ") + "\n"
		}
		tc.Failure = &junitxml.Problem{Type: "fail", Message: why, Body: junitxml.Body(body)}
	}
	return tc
}

// checkCases are a clone's guestcheck verdict: a case per check from its
// report, else one case for the console's verdict, else one skipped case
// saying why nothing judged it.
func checkCases(c CloneResult) []junitxml.Case {
	class := "sealprep.prove.clones." + c.Name
	if len(c.Checks) > 0 {
		fix := "fix: " + cloneFix(c) + "\n"
		var out []junitxml.Case
		for _, k := range c.Checks {
			tc := junitxml.Case{Name: c.Name + ": " + k.ID, Classname: class, Time: "0"}
			switch {
			case k.Baseline:
				// The site's baseline, which does not fail the proof.
				tc.Skipped = &junitxml.Skipped{Message: "baseline only, not part of the proof: " + k.Summary}
			case k.Status == "fail":
				tc.Failure = &junitxml.Problem{Type: "fail", Message: k.Summary, Body: junitxml.Body(k.Summary + "\n" + fix)}
			case k.Status == "error":
				tc.Error = &junitxml.Problem{Type: "error", Message: k.Summary, Body: junitxml.Body(k.Summary + "\n" + fix)}
			case k.Status == "skip":
				tc.Skipped = &junitxml.Skipped{Message: k.Summary}
			}
			out = append(out, tc)
		}
		return out
	}
	tc := junitxml.Case{Name: c.Name + ": guestcheck", Classname: class, Time: "0"}
	switch {
	case c.Verdict != nil:
		if st := c.Verdict.Status; st == "FAIL" || st == "ERROR" {
			msg := cloneFailed(c)
			tc.Failure = &junitxml.Problem{Type: "fail", Message: msg, Body: junitxml.Body(msg + "\nfix: " + cloneFix(c) + "\n")}
		}
	case c.IdentityOnly:
		tc.Skipped = &junitxml.Skipped{Message: "guestcheck is not in the image: only identity was compared"}
	default:
		tc.Skipped = &junitxml.Skipped{Message: "not judged: the clone did not come up"}
	}
	return []junitxml.Case{tc}
}

// rebootCases are a clone's second boot under --reboot, each its own
// case named "clone-N: reboot: ...": it came back and was judged, each
// guestcheck check on it, and each item stable across the reboot.
func rebootCases(c CloneResult) []junitxml.Case {
	if c.Reboot == nil {
		return nil
	}
	rb := c.Reboot
	second := rb.asClone(c)
	second.Name = c.Name + ": reboot"
	boot := bootCase(second)
	boot.Classname = "sealprep.prove.clones." + c.Name
	out := []junitxml.Case{boot}
	for _, tc := range checkCases(second) {
		tc.Classname = boot.Classname
		out = append(out, tc)
	}
	for _, it := range RebootItems {
		name := c.Name + ": reboot: " + it + " stable"
		if it == ItemFirstBoot {
			name = c.Name + ": reboot: first-boot work not repeated"
		}
		tc := junitxml.Case{Name: name, Classname: boot.Classname, Time: "0"}
		for _, ch := range rb.Changed {
			if ch.Item == it {
				msg := ch.message()
				tc.Failure = &junitxml.Problem{Type: "fail", Message: msg, Body: junitxml.Body(msg + "\nfix: " + rebootFixes[it] + "\n")}
			}
		}
		switch {
		case tc.Failure != nil:
		case rb.Boot != BootUp:
			tc.Skipped = &junitxml.Skipped{Message: "not compared: the clone did not come back from the reboot"}
		case it == ItemFirstBoot && !rb.FirstBootRead:
			tc.Skipped = &junitxml.Skipped{Message: "not compared: cloud-init's per-instance semaphores (" + semDir + ") were not read on both boots"}
		case it != ItemFirstBoot && (c.Identity == nil || rb.Identity == nil || !hasItem(*c.Identity, guestid.Item(it)) || !hasItem(*rb.Identity, guestid.Item(it))):
			tc.Skipped = &junitxml.Skipped{Message: "not compared: not read on both boots"}
		}
		out = append(out, tc)
	}
	return out
}

// budgetCase is "clone-N: within the boot budget" (or "clone-N: reboot:
// ..."), under --boot-budget only; skipped when the boot gave no verdict.
func budgetCase(clone, step string, bt *BootTime, budgetMS int64) (junitxml.Case, bool) {
	if budgetMS <= 0 {
		return junitxml.Case{}, false
	}
	name := clone + ": within the boot budget"
	if step != "" {
		name = clone + ": " + step + ": within the boot budget"
	}
	tc := junitxml.Case{Name: name, Classname: "sealprep.prove.clones." + clone, Time: "0"}
	if bt == nil {
		tc.Skipped = &junitxml.Skipped{Message: "no verdict came, so no time to it"}
		return tc, true
	}
	tc.Time = junitxml.Seconds(bt.ToVerdictMS)
	if f, over := budgetFailure(clone, step, bt, time.Duration(budgetMS)*time.Millisecond); over {
		tc.Failure = &junitxml.Problem{Type: "fail", Message: f.Message, Body: junitxml.Body(f.Message + "\nfix: " + f.Fix + "\n")}
	}
	return tc, true
}
