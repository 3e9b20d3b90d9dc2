package cloudinit

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/systemd"
)

// Codes lists every finding code the cloud-init check reports.
var Codes = []string{
	codeCINotInstalled, codeCIDisabled, codeCINotStarted, codeCIRunning,
	codeCIRunningInFinal, codeCIDone, codeCIModuleError, codeCIRecoverable,
	codeCIUnitFailed, codeCIStaleResult, codeCIDatasourceNone, codeCIUnreadable,
	codeCIResultUnreadable, codeCIInterrupted,
}

// Finding codes of the cloud-init check.
const (
	codeCINotInstalled   = "cloud-init-not-installed"
	codeCIDisabled       = "cloud-init-disabled"
	codeCINotStarted     = "cloud-init-not-started"
	codeCIRunning        = "cloud-init-running"
	codeCIRunningInFinal = "cloud-init-running-in-final"
	codeCIDone           = "cloud-init-done"
	codeCIModuleError    = "cloud-init-module-error"
	codeCIRecoverable    = "cloud-init-recoverable-error"
	codeCIUnitFailed     = "cloud-init-unit-failed"
	codeCIStaleResult    = "cloud-init-stale-result"
	codeCIDatasourceNone = "cloud-init-datasource-none"
	codeCIUnreadable     = "cloud-init-status-unreadable"
	// codeCIResultUnreadable is a result.json that exists but cannot be
	// used; the verdict still comes from status.json, as cloud-init's does.
	codeCIResultUnreadable = "cloud-init-result-unreadable"
	codeCIInterrupted      = "cloud-init-interrupted"
)

// notStartedGrace is how long after boot a cloud-init that has not
// started is still plausibly on its way (slow emulated boots take a few
// minutes to reach cloud-init-local); after it, "not started" is a failure.
const notStartedGrace = 10 * time.Minute

// judgedUnits are the units whose failure fails the check: the ones
// `cloud-init status` consults, plus cloud-init.service, the name of the
// network stage before 24.3.
func judgedUnits() []string {
	return append(UnitNames(), "cloud-init.service")
}

// checkRun carries one run of the check.
type checkRun struct {
	env    *check.Env
	snap   *Snapshot
	st     *State
	units  []systemd.UnitState
	inside bool
	via    string
	base   map[string]string
	out    []check.Finding
}

// Run verifies that cloud-init ran on this boot and finished without
// errors, judging status.json and result.json the way `cloud-init status`
// does (without running it), plus cloud-init's systemd units, results left
// over from an earlier boot, and the case where cloud-init itself started
// guestcheck from runcmd.
func Run(ctx context.Context, env *check.Env) []check.Finding {
	if err := ctx.Err(); err != nil {
		return []check.Finding{interrupted(err)}
	}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	r := &checkRun{env: env}
	r.snap = Read(env.Root, ReadOptions{Live: env.Live, Now: now})
	units, unitsNote, err := queryUnits(ctx, env)
	if err != nil {
		return []check.Finding{interrupted(err)}
	}
	r.units = units
	r.snap.Inputs.Units = units
	if env.Live {
		// Only the running system's process tree says who started us.
		r.inside, r.via = Inside(env.Root)
	}
	r.st = r.snap.State()
	r.base = r.baseDetail(unitsNote)

	if !r.st.Installed {
		r.notInstalled()
		return r.out
	}
	r.fileErrors()
	if r.snap.Usable() {
		r.judge()
	}
	r.unitFindings()
	return r.out
}

func interrupted(err error) check.Finding {
	return check.Errorf(codeCIInterrupted, "cloud-init check interrupted: "+err.Error(), nil,
		"Raise checks.cloud-init.timeout in the config file, or find out why systemd is slow to answer")
}

// queryUnits asks systemd for cloud-init's units. No systemd is not an
// error: the note says so and unit rules are skipped, as cloud-init skips
// them. Only an interrupted context is returned as an error.
func queryUnits(ctx context.Context, env *check.Env) ([]systemd.UnitState, string, error) {
	switch {
	case !env.Live:
		return nil, "not queried: " + env.NotLiveReason(), nil
	case env.Systemd == nil:
		return nil, "not queried: no systemd client", nil
	}
	us, err := env.Systemd.Units(ctx, judgedUnits()...)
	switch {
	case err == nil:
	case errors.Is(err, systemd.ErrNotRunning):
		return nil, "systemd not running", nil
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	default:
		return nil, "query failed: " + oneLine(err.Error()), nil
	}
	parts := make([]string, 0, len(us))
	for _, u := range us {
		if !u.Found() {
			parts = append(parts, u.Name+"=not-found")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%s/%s (%s)", u.Name, u.ActiveState, u.SubState, u.UnitFileState))
	}
	return us, strings.Join(parts, ", "), nil
}

// baseDetail is the evidence every finding carries.
func (r *checkRun) baseDetail(unitsNote string) map[string]string {
	st, root := r.st, r.env.Root
	d := map[string]string{
		"status_file":          root.Display(StatusPath),
		"extended_status":      st.ExtendedStatus(),
		"cloud_init_exit_code": strconv.Itoa(st.ExitCode()),
		"boot_status_code":     string(st.Boot.Code),
		"boot_status_reason":   st.Boot.Reason,
		"datasource":           or(st.Datasource, "not detected yet"),
		"stage":                or(st.Stage, "none running"),
		"units":                unitsNote,
	}
	if r.snap.InstalledEvidence != "" {
		d["installed"] = root.Display(r.snap.InstalledEvidence)
	}
	if st.DatasourceRaw != "" {
		d["datasource_detail"] = st.DatasourceRaw
	}
	if st.LatestEvent.Set {
		d["timestamp_encoding"] = string(st.Encoding)
		d["last_update"] = when(st.LatestEvent, st.LastUpdate)
	}
	for _, s := range st.Stages {
		if !s.Start.Set && !s.Finished.Set {
			continue
		}
		key := "stage_" + strings.NewReplacer("-", "_", ".", "_").Replace(s.Name)
		d[key] = "start " + when(s.Start, s.StartWall) + ", finished " + when(s.Finished, s.FinishedWall)
	}
	if c := st.Clock; c.UptimeKnown {
		d["uptime"] = c.Uptime.Round(time.Second).String()
	}
	if c := st.Clock; c.Known() {
		d["boot_time"] = c.BootTime.UTC().Format(time.RFC3339)
	}
	if r.inside {
		d["invoked_from"] = r.via
	}
	if bf := r.snap.Inputs.BootFinished; bf != nil {
		v := "modified " + bf.ModTime.UTC().Format(time.RFC3339)
		switch {
		case bf.ParseErr != nil:
			v += "; unparsable: " + bf.ParseErr.Error()
		case bf.Content != nil:
			if bf.Content.UptimeKnown {
				v += fmt.Sprintf("; written at uptime %s", bf.Content.Uptime.Round(time.Second))
			}
			v += "; cloud-init " + bf.Content.Version
		}
		d["boot_finished"] = v
	} else {
		d["boot_finished"] = "absent"
	}
	if id := r.snap.InstanceData; id != nil {
		for k, v := range map[string]string{
			"instance_id": id.InstanceID, "cloud_name": id.CloudName, "platform": id.Platform,
			"subplatform": id.Subplatform, "local_hostname": id.LocalHostname,
		} {
			if v != "" {
				d[k] = v
			}
		}
	}
	for p, note := range r.snap.Notes {
		d["note_"+strings.NewReplacer("/", "_", ".", "_").Replace(strings.TrimPrefix(p, "/"))] = note
	}
	return d
}

// when renders a status.json time with its raw value, since the raw value
// is what `cloud-init status` shows (as a 1970 date for 24.2+ uptimes).
func when(ts Timestamp, wall time.Time) string {
	if !ts.Set {
		return "never"
	}
	raw := strconv.FormatFloat(ts.Raw, 'f', -1, 64)
	if wall.IsZero() {
		return raw + " (" + string(ts.Encoding()) + ", boot time unknown)"
	}
	return wall.UTC().Format(time.RFC3339) + " (" + raw + ")"
}

// with copies the base detail and adds kv pairs.
func (r *checkRun) with(kv ...string) map[string]string {
	d := make(map[string]string, len(r.base)+len(kv)/2)
	for k, v := range r.base {
		d[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		d[kv[i]] = kv[i+1]
	}
	return d
}

func (r *checkRun) add(st check.Status, code, msg string, d map[string]string, fix string) {
	if st == check.Pass || st == check.Skip {
		fix = ""
	}
	msg = oneLine(msg)
	if strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "...") {
		msg = strings.TrimSuffix(msg, ".") // messages carry no trailing period
	}
	r.out = append(r.out, check.New(st, code, msg, d, fix))
}

func (r *checkRun) required() bool { return r.env.Config != nil && r.env.Config.CloudInit.Required }

func (r *checkRun) notInstalled() {
	st, fix := check.Skip, ""
	if r.required() {
		st = check.Fail
		fix = "Install cloud-init in the image (it must provision this VM), or set cloud_init.required: false in the config file"
	}
	r.add(st, codeCINotInstalled, "cloud-init is not installed", r.with("looked_for",
		strings.Join([]string{StatusPath, "/usr/bin/cloud-init", "/etc/cloud/cloud.cfg"}, ", ")), fix)
}

// fileErrors reports every cloud-init file that exists but cannot be used.
// A broken status.json or instance-data.json is an error of the check (it
// cannot judge, or loses the instance details). A broken result.json is
// not: cloud-init only tests that it exists and takes the verdict and the
// errors from status.json, so judge() still reports those, and the file is
// a warning of its own.
func (r *checkRun) fileErrors() {
	for _, fe := range []*FileError{r.snap.StatusErr, r.snap.InstanceDataErr} {
		if fe == nil {
			continue
		}
		shown := r.env.Root.Display(fe.Path)
		r.add(check.Error, codeCIUnreadable, shown+": "+fe.Err.Error(),
			r.with("file", shown, "reason", fe.Err.Error()), fileFix(fe, shown))
	}
	if fe := r.snap.ResultErr; fe != nil {
		shown := r.env.Root.Display(fe.Path)
		judged := "the verdict comes from status.json, as cloud-init's does"
		if r.snap.StatusErr != nil {
			judged = "status.json is unusable too, so there is no verdict"
		}
		r.add(check.Warn, codeCIResultUnreadable,
			fmt.Sprintf("%s is unusable (%s), so tools that read it get no result; %s", shown, fe.Err.Error(), judged),
			r.with("file", shown, "reason", fe.Err.Error()), fileFix(fe, shown))
	}
}

// fileFix is the remediation for a cloud-init file that cannot be used.
func fileFix(fe *FileError, shown string) string {
	if errors.Is(fe.Err, syscall.EACCES) || errors.Is(fe.Err, syscall.EPERM) {
		return "Run guestcheck as root, or make " + shown + " readable"
	}
	return "Inspect " + shown + " and /var/log/cloud-init.log; cloud-init rewrites its status files at every stage, so a reboot (or `cloud-init clean --logs --reboot` on a template) replaces a corrupt one"
}

// judge turns a usable state into findings.
func (r *checkRun) judge() {
	st := r.st
	switch {
	case st.Running == Disabled:
		// Leftovers from before it was disabled are expected; errors this
		// boot recorded before that (cloud-init says "error - disabled")
		// are still reported below.
		r.disabled()
	case st.StatusStale:
		r.staleStatus()
		r.notStarted()
	case st.Running == NotStarted:
		r.notStarted()
	case st.Running == IsRunning:
		r.running()
	case st.Running == Done && st.Condition != Errored:
		r.add(check.Pass, codeCIDone, fmt.Sprintf("cloud-init finished this boot: %s (datasource %s)",
			st.ExtendedStatus(), or(st.Datasource, "unknown")), r.with(), "")
	}
	if st.Running != Disabled {
		for _, lo := range st.Leftovers {
			shown := r.env.Root.Display(lo.Path)
			r.add(check.Warn, codeCIStaleResult, fmt.Sprintf("%s is from an earlier boot (%s)", shown, lo.Reason),
				r.with("file", shown),
				"Do not take this file as proof that this boot was provisioned; find out why cloud-init did not run this boot with `journalctl -b -u 'cloud-*'`")
		}
	}
	if st.StatusStale {
		// Errors recorded by an earlier boot are not this boot's.
		return
	}
	r.moduleErrors()
	r.recoverable()
	if st.Datasource == "none" && st.Running != NotStarted {
		r.add(check.Warn, codeCIDatasourceNone,
			"cloud-init found no datasource and fell back to DataSourceNone, so no meta-data or user-data was applied",
			r.with(),
			"Check that the VM has its cloud-init source attached (NoCloud disk, config drive or metadata service) and read /run/cloud-init/ds-identify.log")
	}
}

func (r *checkRun) disabled() {
	st := r.st
	status, fix := check.Skip, ""
	if r.required() {
		status = check.Fail
		switch st.Boot.Code {
		case DisabledByMarkerFile:
			fix = "Remove " + r.env.Root.Display(DisabledMarkerPath) + " if this VM must be provisioned by cloud-init, or set cloud_init.required: false"
		case DisabledByKernelCmdline:
			fix = "Remove cloud-init=disabled from the kernel command line if this VM must be provisioned by cloud-init"
		case DisabledByEnvironment:
			fix = "Remove cloud-init=disabled from KERNEL_CMDLINE in the container's environment"
		default:
			fix = "ds-identify found no datasource: attach the NoCloud disk or config drive, and read /run/cloud-init/ds-identify.log and cloud-init-generator.log"
		}
	}
	r.add(status, codeCIDisabled, fmt.Sprintf("cloud-init is disabled on this boot: %s (%s)",
		strings.TrimSuffix(st.Boot.Reason, "."), st.Boot.Code), r.with(), fix)
}

func (r *checkRun) notStarted() {
	c := r.st.Clock
	if !r.env.Live {
		r.add(check.Skip, codeCINotStarted, "cloud-init has no record of a run in "+
			r.env.Root.Display(StatusPath)+"; its run state is only meaningful on the running system",
			r.with("reason", r.env.NotLiveReason()), "")
		return
	}
	status := check.Warn
	why := "system uptime unknown, so it may still be booting"
	if c.UptimeKnown {
		why = fmt.Sprintf("up %s", c.Uptime.Round(time.Second))
		if c.Uptime > notStartedGrace {
			status = check.Fail
			why += fmt.Sprintf(", more than the %s cloud-init needs to start", notStartedGrace)
		} else {
			why += fmt.Sprintf(", within the %s grace period for a booting system", notStartedGrace)
		}
	}
	r.add(status, codeCINotStarted, "cloud-init has not started on this boot ("+why+")",
		r.with("grace", notStartedGrace.String()),
		"Check `systemctl status cloud-init-local.service cloud-init-main.service` and /run/cloud-init/cloud-init-generator.log for why cloud-init did not start, or re-run with `--wait 10m` while the system is still booting")
}

func (r *checkRun) staleStatus() {
	st := r.st
	reason := "its last event, " + when(st.LatestEvent, st.LastUpdate) + ", predates this boot"
	if st.Encoding == EncodingUptime && st.Clock.UptimeKnown {
		reason = fmt.Sprintf("its last event is at uptime %s, but this boot has been up only %s",
			time.Duration(st.LatestEvent.Raw*float64(time.Second)).Round(time.Second), st.Clock.Uptime.Round(time.Second))
	}
	shown := r.env.Root.Display(StatusPath)
	r.add(check.Warn, codeCIStaleResult, shown+" is from an earlier boot ("+reason+")",
		r.with("file", shown),
		"Make sure /run is a tmpfs and find out why cloud-init did not run this boot with `journalctl -b -u 'cloud-*'`")
}

func (r *checkRun) running() {
	st := r.st
	if r.inside && st.Stage == StageModulesFinal {
		// cloud-init cannot finish before we return: "running" is the
		// expected state, and waiting would wait on ourselves.
		note := "earlier stages finished cleanly"
		if st.StageErrorsBefore(StageModulesFinal) {
			note = "earlier stages recorded errors, reported separately"
		}
		r.add(check.Pass, codeCIRunningInFinal,
			"cloud-init is running its final stage, which started guestcheck; "+note,
			r.with("note", "not waiting: cloud-init finishes only after guestcheck returns; a non-zero exit of the last runcmd command turns cloud-init's status to error, so run guestcheck with --exit-zero there"),
			"")
		return
	}
	if r.inside {
		r.add(check.Warn, codeCIRunning, fmt.Sprintf("cloud-init is running stage %s, which started guestcheck, so its result is not known yet",
			or(st.Stage, "(between stages)")), r.with(),
			"Run guestcheck from runcmd (the final stage) or after cloud-final.service, not from bootcmd or an earlier stage")
		return
	}
	r.add(check.Warn, codeCIRunning, fmt.Sprintf("cloud-init is still running (stage %s)", or(st.Stage, "between stages")),
		r.with(),
		"Re-run with `--wait 10m` to wait for cloud-init to finish, or follow it with `cloud-init status --long` and /var/log/cloud-init.log")
}

func (r *checkRun) moduleErrors() {
	for _, e := range r.st.Errors {
		mod := ModuleName(e.Message)
		// The full text (often a Python repr with a traceback) is in detail.
		text := clipRunes(oneLine(e.Message), 200)
		msg := fmt.Sprintf("cloud-init stage %s failed: %s", e.Stage, text)
		fix := "Read the traceback in /var/log/cloud-init.log (`cloud-init status --long` lists the errors) and validate the user-data with `cloud-init schema --system`"
		if mod != "" {
			msg = fmt.Sprintf("cloud-init module %s failed in stage %s: %s", mod, e.Stage, text)
		}
		switch strings.ReplaceAll(mod, "-", "_") {
		case "scripts_user", "scripts_per_boot", "scripts_per_instance", "scripts_per_once", "scripts_vendor":
			fix = "A runcmd or user script exited non-zero: find its output in /var/log/cloud-init-output.log; when guestcheck runs from runcmd, give it --exit-zero so its own verdict does not fail the stage"
		case "runcmd":
			fix = "Fix the runcmd list in the user-data (every item must be a string or a list of strings; `cloud-init schema --system` points at the bad one)"
		}
		r.add(check.Fail, codeCIModuleError, msg,
			r.with("error_stage", e.Stage, "module", or(mod, "unknown"), "error", e.Message), fix)
	}
}

func (r *checkRun) recoverable() {
	by := map[string][]RecoverableError{}
	var levels []string
	for _, e := range r.st.Recoverable {
		if _, ok := by[e.Level]; !ok {
			levels = append(levels, e.Level)
		}
		by[e.Level] = append(by[e.Level], e)
	}
	sort.Strings(levels)
	for _, lvl := range levels {
		es := by[lvl]
		msgs := make([]string, len(es))
		stageSet := map[string]bool{}
		var stages []string
		for i, e := range es {
			msgs[i] = oneLine(e.Message)
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
		fix := "Read the messages with `cloud-init status --long` and fix the user-data or configuration they point at (`cloud-init schema --system` reports invalid and deprecated keys)"
		if lvl == "DEPRECATED" {
			fix = "Replace the deprecated keys the messages name (`cloud-init schema --system --annotate` shows where they are)"
		}
		r.add(check.Warn, codeCIRecoverable, msg,
			r.with("level", lvl, "messages", strings.Join(msgs, "\n"), "error_stages", strings.Join(stages, ", ")), fix)
	}
}

// unitFindings fails every cloud-init unit that failed, or that is
// disabled or masked (cloud-init's own status treats both as an error).
func (r *checkRun) unitFindings() {
	for _, u := range r.units {
		if !u.Found() {
			continue
		}
		switch {
		case u.Failed() || u.SubState == "failed":
			r.add(check.Fail, codeCIUnitFailed, fmt.Sprintf("%s failed (%s/%s)", u.Name, u.ActiveState, u.SubState),
				r.with("unit", u.Name, "active_state", u.ActiveState, "sub_state", u.SubState, "unit_file_state", u.UnitFileState),
				fmt.Sprintf("Run `systemctl status %s` and `journalctl -b -u %s` to see why it failed", u.Name, u.Name))
		case u.UnitFileState != "" && !UnitFileEnabled(u.UnitFileState):
			r.add(check.Fail, codeCIUnitFailed, fmt.Sprintf("%s is %s, so cloud-init cannot run all of its stages", u.Name, u.UnitFileState),
				r.with("unit", u.Name, "active_state", u.ActiveState, "sub_state", u.SubState, "unit_file_state", u.UnitFileState),
				fmt.Sprintf("Re-enable it with `systemctl unmask %s && systemctl enable %s`, or disable cloud-init as a whole with /etc/cloud/cloud-init.disabled", u.Name, u.Name))
		}
	}
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// oneLine folds whitespace runs (newlines from tracebacks included) into
// single spaces, so that a message stays one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clipText shortens s to about n bytes without splitting a character.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
