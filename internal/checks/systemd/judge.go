package systemd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	systemdfact "github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Milestones are the units whose activation the boot-time figures report:
// cloud-init's last stage, the guest agent and sshd (either name).
var Milestones = [][]string{{"cloud-final.service"}, {"qemu-guest-agent.service"}, {"ssh.service", "sshd.service"}}

// Check is the systemd check: the system state as is-system-running
// reports it, each failed unit, that the boot finished with no stuck job,
// the boot time against systemd.boot_budget and ordering cycles.
// docs/checks/systemd.md explains each code.
var Check = runner.Check{
	ID:    "systemd",
	Title: "systemd state, failed units and boot time",
	Description: "the system is running (not degraded: each failed unit with its result), the boot finished with no stuck job, " +
		"boot time within systemd.boot_budget with the critical chain, no ordering cycle",
	Settings: settings.Section(),
	Codes:    Codes,
	Run:      Run,
}

// Run gathers the facts from systemd and judges them.
func Run(ctx context.Context, env *runner.Env) []runner.Finding {
	f := Gather(ctx, env)
	if ctx.Err() != nil && f.Err == nil && f.UnitsErr == nil {
		f.Err = ctx.Err()
	}
	return Judge(f)
}

// Judge turns the facts into findings.
func Judge(f Facts) []runner.Finding {
	if !f.Live {
		return []runner.Finding{runner.Skipf(CodeNotLive.ID, "system state not checked: "+f.NotLiveReason, nil)}
	}
	if f.Err != nil {
		if errors.Is(f.Err, systemdfact.ErrNotRunning) {
			return []runner.Finding{runner.Skipf(CodeNotRunning.ID, f.Err.Error(), nil)}
		}
		return []runner.Finding{CodeUnreadable.New(runner.Error, "cannot read systemd's state", map[string]string{"error": f.Err.Error()},
			CodeUnreadable.Fixf())}
	}
	out := JudgeState(f)
	out = append(out, JudgeBoot(f)...)
	out = append(out, JudgeJournalCycles(f.Journal)...)
	if f.UnitsErr != nil {
		return append(out, CodeUnreadable.New(runner.Error, "cannot list the units: failed units, boot times and ordering cycles not judged",
			map[string]string{"error": f.UnitsErr.Error()}, CodeUnreadable.CaseFix("when the unit list could not be read")))
	}
	out = append(out, JudgeFailed(f)...)
	out = append(out, JudgeBootTime(f)...)
	out = append(out, JudgeCycles(f)...)
	return out
}

func sec(us uint64) string {
	return (time.Duration(us) * time.Microsecond).Round(10 * time.Millisecond).String()
}

func failedUnits(f Facts) []systemdfact.UnitInfo {
	var out []systemdfact.UnitInfo
	for _, u := range f.Units {
		if u.Failed() {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func result(u systemdfact.UnitInfo) string {
	if u.Result == "" {
		return "failed"
	}
	return u.Result
}

// JudgeState applies is-system-running's verdicts.
func JudgeState(f Facts) []runner.Finding {
	s := f.State.SystemState
	d := map[string]string{"system_state": s, "systemd_version": f.State.Version}
	switch s {
	case "running":
		return []runner.Finding{runner.Passf(CodeRunning.ID, "the system is running: booted, no failed units", d)}
	case "degraded":
		var names []string
		for _, u := range failedUnits(f) {
			names = append(names, u.Name+" ("+result(u)+")")
		}
		if len(names) == 0 {
			names = []string{strconv.Itoa(int(f.State.NFailedUnits)) + " unit(s)"}
		}
		return []runner.Finding{CodeDegraded.New(runner.Fail, "the system is degraded: failed "+strings.Join(names, ", "), d, CodeDegraded.Fixf())}
	case "maintenance":
		return []runner.Finding{CodeMaintenance.New(runner.Fail, "the system is in maintenance mode (rescue or emergency target)", d, CodeMaintenance.Fixf())}
	case "stopping", "offline":
		return []runner.Finding{CodeStopping.New(runner.Warn, "the system is "+s, d, CodeStopping.Fixf())}
	case "initializing", "starting":
		return nil // JudgeBoot says whether that is expected
	}
	return []runner.Finding{CodeUnreadable.New(runner.Error, "systemd reports system state "+strconv.Quote(s), d,
		CodeUnreadable.CaseFix("when systemd reports a state guestcheck does not know", "state", strconv.Quote(s)))}
}

// JudgeFailed gives one finding per failed unit, with the command that
// shows why it failed.
func JudgeFailed(f Facts) []runner.Finding {
	var out []runner.Finding
	for _, u := range failedUnits(f) {
		d := map[string]string{"unit": u.Name, "result": result(u), "sub_state": u.SubState, "journal": "journalctl -b -u " + u.Name}
		if u.ResultFromProperty != "" {
			d["result_from"] = u.ResultFromProperty
		}
		out = append(out, CodeUnitFailed.New(runner.Fail, fmt.Sprintf("%s failed (result: %s)", u.Name, result(u)), d,
			CodeUnitFailed.Fixf("unit", u.Name)))
	}
	return out
}

// JudgeBoot: the boot finished, or is only waiting for this check's own
// unit, and no running job has been running longer than the budget.
func JudgeBoot(f Facts) []runner.Finding {
	st := f.State
	var running, waiting []systemdfact.Job
	for _, j := range f.Jobs {
		if j.Unit == f.Self && f.Self != "" {
			continue
		}
		if j.State == "running" {
			running = append(running, j)
		} else {
			waiting = append(waiting, j)
		}
	}
	var out []runner.Finding
	for _, j := range running {
		u := f.Units[j.Unit]
		since := u.InactiveExitMono
		if since == 0 || since > f.NowMono {
			since = st.UserspaceMonotonic
		}
		age := time.Duration(sub(f.NowMono, since)) * time.Microsecond
		if age <= f.Budget {
			continue
		}
		out = append(out, CodeJobStuck.New(runner.Fail,
			fmt.Sprintf("%s job for %s has been running for %s (budget %s)", j.Type, j.Unit, age.Round(time.Second), f.Budget),
			map[string]string{"unit": j.Unit, "job_id": strconv.Itoa(int(j.ID)), "job_type": j.Type, "age": age.Round(time.Second).String(),
				"waiting_jobs": strconv.Itoa(len(waiting))},
			CodeJobStuck.Fixf("unit", j.Unit)))
	}
	if st.FinishMonotonic > 0 {
		return append(out, runner.Passf(CodeBootFinished.ID, "the boot finished "+sec(sub(st.FinishMonotonic, st.UserspaceMonotonic))+" after userspace started",
			map[string]string{"userspace_to_finish": sec(sub(st.FinishMonotonic, st.UserspaceMonotonic))}))
	}
	if len(out) > 0 {
		return out
	}
	d := map[string]string{"running_jobs": jobList(running), "waiting_jobs": strconv.Itoa(len(waiting)), "system_state": st.SystemState}
	if f.Self != "" {
		d["own_unit"] = f.Self
	}
	elapsed := time.Duration(sub(f.NowMono, st.UserspaceMonotonic)) * time.Microsecond
	d["since_userspace"] = elapsed.Round(time.Second).String()
	if len(running) == 0 && f.Self != "" {
		return []runner.Finding{runner.Passf(CodeBootInProgress.ID, "the boot is finishing: only this check's own unit "+f.Self+" is still running", d)}
	}
	return []runner.Finding{CodeBootInProgress.New(runner.Warn,
		fmt.Sprintf("the boot has not finished yet (%s since userspace started, %d job(s) running)", elapsed.Round(time.Second), len(running)), d,
		CodeBootInProgress.Fixf())}
}

func jobList(js []systemdfact.Job) string {
	var s []string
	for _, j := range js {
		s = append(s, j.Unit+" ("+j.Type+")")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// JudgeBootTime reports kernel to userspace and userspace to the
// milestones, and warns when the boot took longer than the budget: the
// time from the kernel's start to the latest milestone (or the end of the
// boot), as cloud-image-tests measures uptime when sshd and the guest
// agent run.
func JudgeBootTime(f Facts) []runner.Finding {
	st := f.State
	if st.UserspaceMonotonic == 0 {
		return nil
	}
	d := map[string]string{"kernel_to_userspace": sec(st.UserspaceMonotonic)}
	if st.InitRDMonotonic > 0 {
		d["kernel_to_initrd"] = sec(st.InitRDMonotonic)
	}
	parts := []string{"kernel " + sec(st.UserspaceMonotonic)}
	last, lastWhat := st.FinishMonotonic, "the end of the boot"
	if st.FinishMonotonic > 0 {
		d["userspace_to_finish"] = sec(sub(st.FinishMonotonic, st.UserspaceMonotonic))
		parts = append(parts, "userspace "+sec(sub(st.FinishMonotonic, st.UserspaceMonotonic)))
	}
	for _, names := range Milestones {
		for _, n := range names {
			u, ok := f.Units[n]
			if !ok || u.ActiveEnterMono == 0 {
				continue
			}
			key := "userspace_to_" + strings.NewReplacer("-", "_", ".service", "").Replace(n)
			d[key] = sec(sub(u.ActiveEnterMono, st.UserspaceMonotonic))
			parts = append(parts, n+" +"+d[key])
			if u.ActiveEnterMono > last {
				last, lastWhat = u.ActiveEnterMono, n
			}
			break
		}
	}
	chain := CriticalChain(f.Units, f.DefaultTarget, st.UserspaceMonotonic, st.FinishMonotonic)
	if len(chain) > 0 {
		var lines []string
		for _, l := range chain {
			s := l.Unit + " @" + sec(l.At)
			if l.Took > 0 {
				s += " +" + sec(l.Took)
			}
			lines = append(lines, s)
		}
		d["critical_chain"] = strings.Join(lines, "\n")
	}
	var slow []string
	for _, l := range Slowest(chain, 5) {
		slow = append(slow, l.Unit+" +"+sec(l.Took))
	}
	if len(slow) > 0 {
		d["slowest_on_critical_chain"] = strings.Join(slow, ", ")
	}
	d["budget"] = f.Budget.String()
	total := time.Duration(last) * time.Microsecond
	if last == 0 {
		return []runner.Finding{runner.Passf(CodeBootTime.ID, "boot times so far: "+strings.Join(parts, ", "), d)}
	}
	d["kernel_to_last_milestone"] = total.Round(10*time.Millisecond).String() + " (" + lastWhat + ")"
	if total > f.Budget {
		msg := fmt.Sprintf("the boot took %s to %s, over the %s budget", total.Round(100*time.Millisecond), lastWhat, f.Budget)
		if len(slow) > 0 {
			msg += "; slowest on the critical chain: " + strings.Join(slow, ", ")
		}
		return []runner.Finding{CodeBootSlow.New(runner.Warn, msg, d, CodeBootSlow.Fixf())}
	}
	return []runner.Finding{runner.Passf(CodeBootTime.ID, "boot: "+strings.Join(parts, ", "), d)}
}

// JudgeCycles reports ordering cycles among the loaded units.
func JudgeCycles(f Facts) []runner.Finding {
	cs := Cycles(f.Units)
	if len(cs) == 0 {
		return []runner.Finding{runner.Passf(CodeNoCycle.ID, fmt.Sprintf("no ordering cycle among the %d loaded units", len(f.Units)), nil)}
	}
	var out []runner.Finding
	for _, c := range cs {
		out = append(out, CodeCycle.New(runner.Fail, "ordering cycle: "+strings.Join(c, ", "),
			map[string]string{"units": strings.Join(c, " "), "journal": "journalctl -b | grep -i 'ordering cycle'"},
			CodeCycle.Fixf("unit", c[0])))
	}
	return out
}
