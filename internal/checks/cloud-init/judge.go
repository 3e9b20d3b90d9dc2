package cloudinit

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Judge turns the facts into findings. It is pure: the state is computed
// from f.Snap.Inputs the way `cloud-init status` computes it, and nothing
// is read.
func Judge(f Facts) []runner.Finding {
	j := judgement{f: f, st: f.Snap.State()}
	j.base = baseDetail(f, j.st)
	if !j.st.Installed {
		return []runner.Finding{j.notInstalled()}
	}
	out := j.fileErrors()
	if f.Snap.Usable() {
		out = append(out, j.state()...)
	}
	return append(out, j.units()...)
}

// judgement is one Judge call: the facts, the state computed from them
// and the evidence every finding carries. It reads nothing.
type judgement struct {
	f    Facts
	st   *State
	base map[string]string
}

// finding builds a finding in the check's style: one line, no trailing
// period, no remediation on a pass or a skip.
func finding(st runner.Status, code runner.Code, msg string, d map[string]string, fix string) runner.Finding {
	if st == runner.Pass || st == runner.Skip {
		fix = ""
	}
	msg = problem.OneLine(msg)
	if strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "...") {
		msg = strings.TrimSuffix(msg, ".") // messages carry no trailing period
	}
	return code.New(st, msg, d, fix)
}

func (j judgement) notInstalled() runner.Finding {
	st, fix := runner.Skip, ""
	if j.f.Required {
		st = runner.Fail
		fix = codeCINotInstalled.Fixf()
	}
	return finding(st, codeCINotInstalled, "cloud-init is not installed", runner.Detail(j.base, "looked_for",
		strings.Join([]string{StatusPath, "/usr/bin/cloud-init", "/etc/cloud/cloud.cfg"}, ", ")), fix)
}

// fileErrors reports every cloud-init file that exists but cannot be used.
// A broken status.json or instance-data.json is an error of the check (it
// cannot judge, or loses the instance details). A broken result.json is
// not: cloud-init only tests that it exists and takes the verdict and the
// errors from status.json, so state() still reports those, and the file is
// a warning of its own.
func (j judgement) fileErrors() []runner.Finding {
	var out []runner.Finding
	snap := j.f.Snap
	for _, fe := range []*FileError{snap.StatusErr, snap.InstanceDataErr} {
		if fe == nil {
			continue
		}
		shown := j.f.show(fe.Path)
		out = append(out, finding(runner.Error, codeCIUnreadable, shown+": "+fe.Err.Error(),
			runner.Detail(j.base, "file", shown, "reason", fe.Err.Error()), j.fileFix(codeCIUnreadable, fe, shown)))
	}
	if fe := snap.ResultErr; fe != nil {
		shown := j.f.show(fe.Path)
		judged := "the verdict comes from status.json, as cloud-init's does"
		if snap.StatusErr != nil {
			judged = "status.json is unusable too, so there is no verdict"
		}
		out = append(out, finding(runner.Warn, codeCIResultUnreadable,
			fmt.Sprintf("%s is unusable (%s), so tools that read it get no result; %s", shown, fe.Err.Error(), judged),
			runner.Detail(j.base, "file", shown, "reason", fe.Err.Error()), j.fileFix(codeCIResultUnreadable, fe, shown)))
	}
	return out
}

// fileFix is code's remediation for a cloud-init file that cannot be
// used: for a permission error, by whether guestcheck already runs as
// root (rerunning as root helps only a user who is not).
func (j judgement) fileFix(code runner.Code, fe *FileError, shown string) string {
	switch {
	case (errors.Is(fe.Err, syscall.EACCES) || errors.Is(fe.Err, syscall.EPERM)) && !j.f.IsRoot:
		return code.CaseFix("when guestcheck is not root", "file", shown)
	case errors.Is(fe.Err, syscall.EACCES) || errors.Is(fe.Err, syscall.EPERM):
		return code.CaseFix(runner.WhenRootDenied, "file", shown)
	}
	return code.FixOn(j.f.Live, "file", shown)
}

// state turns a usable state into findings.
func (j judgement) state() []runner.Finding {
	st := j.st
	var out []runner.Finding
	switch {
	case st.Running == Disabled:
		// Leftovers from before it was disabled are expected; errors this
		// boot recorded before that (cloud-init says "error - disabled")
		// are still reported below.
		out = append(out, j.disabled())
	case st.StatusStale:
		out = append(out, j.staleStatus(), j.notStarted())
	case st.Running == NotStarted:
		out = append(out, j.notStarted())
	case st.Running == IsRunning:
		out = append(out, j.running())
	case st.Running == Done && st.Condition != Errored:
		out = append(out, finding(runner.Pass, codeCIDone, fmt.Sprintf("cloud-init finished this boot: %s (datasource %s)",
			st.ExtendedStatus(), or(st.Datasource, "unknown")), runner.Detail(j.base), ""))
	}
	if st.Running != Disabled {
		for _, lo := range st.Leftovers {
			shown := j.f.show(lo.Path)
			out = append(out, finding(runner.Warn, codeCIStaleResult, fmt.Sprintf("%s is from an earlier boot (%s)", shown, lo.Reason),
				runner.Detail(j.base, "file", shown),
				codeCIStaleResult.FixOn(j.f.Live, "file", shown)))
		}
	}
	if st.StatusStale {
		// Errors recorded by an earlier boot are not this boot's.
		return out
	}
	out = append(out, j.moduleErrors()...)
	out = append(out, j.recoverable()...)
	if st.Datasource == "none" && st.Running != NotStarted {
		out = append(out, finding(runner.Warn, codeCIDatasourceNone,
			"cloud-init found no datasource and fell back to DataSourceNone, so no meta-data or user-data was applied",
			runner.Detail(j.base),
			codeCIDatasourceNone.Fixf()))
	}
	return out
}

func (j judgement) disabled() runner.Finding {
	st := j.st
	status, fix := runner.Skip, ""
	if j.f.Required {
		status = runner.Fail
		switch st.Boot.Code {
		case DisabledByMarkerFile:
			fix = codeCIDisabled.Fixf("marker", j.f.show(DisabledMarkerPath))
		case DisabledByKernelCmdline:
			fix = codeCIDisabled.CaseFix("when the kernel command line disables it")
		case DisabledByEnvironment:
			fix = codeCIDisabled.CaseFix("when the container's environment disables it")
		default:
			fix = codeCIDisabled.CaseFix("when the generator found no datasource")
		}
	}
	return finding(status, codeCIDisabled, fmt.Sprintf("cloud-init is disabled on this boot: %s (%s)",
		strings.TrimSuffix(st.Boot.Reason, "."), st.Boot.Code), runner.Detail(j.base), fix)
}

func (j judgement) notStarted() runner.Finding {
	c := j.st.Clock
	if !j.f.Live {
		return finding(runner.Skip, codeCINotStarted, "cloud-init has no record of a run in "+
			j.f.show(StatusPath)+"; its run state is only meaningful on the running system",
			runner.Detail(j.base, "reason", j.f.NotLiveReason), "")
	}
	status := runner.Warn
	why := "system uptime unknown, so it may still be booting"
	// The wait advised is what is left of the grace period: past it,
	// waiting longer is no advice at all.
	fix := codeCINotStarted.Fixf("wait", waitLeft(notStartedGrace))
	if c.UptimeKnown {
		why = fmt.Sprintf("up %s", c.Uptime.Round(time.Second))
		if c.Uptime > notStartedGrace {
			status = runner.Fail
			why += fmt.Sprintf(", more than the %s cloud-init needs to start", notStartedGrace)
			fix = codeCINotStarted.CaseFix("when the system has been up longer than the grace period")
		} else {
			why += fmt.Sprintf(", within the %s grace period for a booting system", notStartedGrace)
			fix = codeCINotStarted.Fixf("wait", waitLeft(notStartedGrace-c.Uptime))
		}
	}
	return finding(status, codeCINotStarted, "cloud-init has not started on this boot ("+why+")",
		runner.Detail(j.base, "grace", notStartedGrace.String()), fix)
}

// waitLeft words d for --wait: whole minutes, rounded up, at least one.
func waitLeft(d time.Duration) string {
	return fmt.Sprintf("%dm", max(1, int((d+time.Minute-1)/time.Minute)))
}

func (j judgement) staleStatus() runner.Finding {
	st := j.st
	reason := "its last event, " + when(st.LatestEvent, st.LastUpdate) + ", predates this boot"
	if st.Encoding == cloudinitstatus.EncodingUptime && st.Clock.UptimeKnown {
		reason = fmt.Sprintf("its last event is at uptime %s, but this boot has been up only %s",
			time.Duration(st.LatestEvent.Raw*float64(time.Second)).Round(time.Second), st.Clock.Uptime.Round(time.Second))
	}
	shown := j.f.show(StatusPath)
	fix := codeCIStaleResult.CaseFix("when status.json is from an earlier boot")
	if !j.f.Live {
		fix = codeCIStaleResult.CaseFix("when an image carries an earlier run's status.json")
	}
	return finding(runner.Warn, codeCIStaleResult, shown+" is from an earlier boot ("+reason+")",
		runner.Detail(j.base, "file", shown), fix)
}

func (j judgement) running() runner.Finding {
	st := j.st
	if j.f.Inside && st.Stage == cloudinitstatus.StageModulesFinal {
		// cloud-init cannot finish before we return: "running" is the
		// expected state, and waiting would wait on ourselves.
		note := "earlier stages finished cleanly"
		if st.StageErrorsBefore(cloudinitstatus.StageModulesFinal) {
			note = "earlier stages recorded errors, reported separately"
		}
		return finding(runner.Pass, codeCIRunningInFinal,
			"cloud-init is running its final stage, which started guestcheck; "+note,
			runner.Detail(j.base, "note", "not waiting: cloud-init finishes only after guestcheck returns; a non-zero exit of the last runcmd command turns cloud-init's status to error, so run guestcheck with --exit-zero there"),
			"")
	}
	if j.f.Inside {
		return finding(runner.Warn, codeCIRunning, fmt.Sprintf("cloud-init is running stage %s, which started guestcheck, so its result is not known yet",
			or(st.Stage, "(between stages)")), runner.Detail(j.base),
			codeCIRunning.CaseFix("when cloud-init started guestcheck before its final stage"))
	}
	return finding(runner.Warn, codeCIRunning, fmt.Sprintf("cloud-init is still running (stage %s)", or(st.Stage, "between stages")),
		runner.Detail(j.base),
		codeCIRunning.FixOn(j.f.Live))
}

func (j judgement) moduleErrors() []runner.Finding {
	var out []runner.Finding
	for _, e := range j.st.Errors {
		mod := ModuleName(e.Message)
		// The full text (often a Python repr with a traceback) is in detail.
		text := clipRunes(problem.OneLine(e.Message), 200)
		msg := fmt.Sprintf("cloud-init stage %s failed: %s", e.Stage, text)
		fix := codeCIModuleError.FixOn(j.f.Live)
		if mod != "" {
			msg = fmt.Sprintf("cloud-init module %s failed in stage %s: %s", mod, e.Stage, text)
		}
		switch strings.ReplaceAll(mod, "-", "_") {
		case "scripts_user", "scripts_per_boot", "scripts_per_instance", "scripts_per_once", "scripts_vendor":
			fix = codeCIModuleError.CaseFix("when a runcmd or user script failed")
		case "runcmd":
			fix = codeCIModuleError.CaseFix("when the runcmd list is invalid")
			if !j.f.Live {
				fix = codeCIModuleError.CaseFix("when the runcmd list of an image is invalid")
			}
		}
		// Kept even when empty: the stage and the text are as recorded.
		d := runner.Detail(j.base)
		d["error_stage"], d["module"], d["error"] = e.Stage, or(mod, "unknown"), e.Message
		out = append(out, finding(runner.Fail, codeCIModuleError, msg, d, fix))
	}
	return out
}

// recoverable reports the recoverable errors, one finding per log level.
func (j judgement) recoverable() []runner.Finding {
	by := map[string][]RecoverableError{}
	var levels []string
	for _, e := range j.st.Recoverable {
		if _, ok := by[e.Level]; !ok {
			levels = append(levels, e.Level)
		}
		by[e.Level] = append(by[e.Level], e)
	}
	sort.Strings(levels)
	var out []runner.Finding
	for _, lvl := range levels {
		out = append(out, j.recoverableLevel(lvl, by[lvl]))
	}
	return out
}

// recoverableLevel is the finding for the messages logged at one level.
func (j judgement) recoverableLevel(lvl string, es []RecoverableError) runner.Finding {
	msgs := make([]string, len(es))
	stageSet := map[string]bool{}
	var stages []string
	for i, e := range es {
		msgs[i] = problem.OneLine(e.Message)
		if !stageSet[e.Stage] {
			stageSet[e.Stage] = true
			stages = append(stages, e.Stage)
		}
	}
	noun := "message"
	if len(es) > 1 {
		noun = "messages"
	}
	msg := fmt.Sprintf("cloud-init logged %d %s %s: %s", len(es), lvl, noun, clipRunes(msgs[0], 160))
	if len(es) > 1 {
		msg += fmt.Sprintf(" (+%d more)", len(es)-1)
	}
	fix := codeCIRecoverable.FixOn(j.f.Live)
	switch {
	case lvl == "DEPRECATED" && j.f.Live:
		fix = codeCIRecoverable.CaseFix("when keys are deprecated")
	case lvl == "DEPRECATED":
		fix = codeCIRecoverable.CaseFix("when keys in an image are deprecated")
	}
	// Kept even when empty, as recorded.
	d := runner.Detail(j.base)
	d["level"], d["messages"], d["error_stages"] = lvl, strings.Join(msgs, "\n"), strings.Join(stages, ", ")
	return finding(runner.Warn, codeCIRecoverable, msg, d, fix)
}

// units fails every cloud-init unit that failed, or that is disabled or
// masked (cloud-init's own status treats both as an error).
func (j judgement) units() []runner.Finding {
	var out []runner.Finding
	for _, u := range j.f.Snap.Inputs.Units {
		if !u.Found() {
			continue
		}
		// Kept even when systemd left a state empty.
		d := runner.Detail(j.base, "unit", u.Name)
		d["active_state"], d["sub_state"], d["unit_file_state"] = u.ActiveState, u.SubState, u.UnitFileState
		switch {
		case u.Failed() || u.SubState == "failed":
			out = append(out, finding(runner.Fail, codeCIUnitFailed, fmt.Sprintf("%s failed (%s/%s)", u.Name, u.ActiveState, u.SubState), d,
				codeCIUnitFailed.Fixf("unit", u.Name)))
		case u.UnitFileState != "" && !UnitFileEnabled(u.UnitFileState):
			out = append(out, finding(runner.Fail, codeCIUnitFailed, fmt.Sprintf("%s is %s, so cloud-init cannot run all of its stages", u.Name, u.UnitFileState), d,
				codeCIUnitFailed.CaseFix("when the unit is disabled or masked", "unit", u.Name)))
		}
	}
	return out
}
