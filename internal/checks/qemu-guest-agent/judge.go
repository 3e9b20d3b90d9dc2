package qemuguestagent

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/auditlog"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Judge turns the facts into findings. It is pure: nothing is read.
func Judge(f Facts) []runner.Finding {
	r := &judgement{f: f, chanBad: -1}
	if f.Live {
		if !r.channel() {
			return r.out // not a QEMU/KVM guest: nothing else applies
		}
	} else {
		r.add(CodeNotLive.New(runner.Skip, "virtio channel, unit and process not checked: "+f.NotLiveReason, nil, CodeNotLive.Fixf()))
	}
	if !r.installed() {
		return r.out
	}
	if f.Live {
		r.unitState()
		r.processFindings()
	}
	if f.Interrupted {
		return append(r.out, CodeUnreadable.New(runner.Error, "the check's deadline passed", nil, CodeUnreadable.CaseFix("when the deadline passed")))
	}
	r.ignored()
	r.filter()
	r.marker()
	r.selinux(r.hooks())
	return r.out
}

// judgement is one Judge call: the facts and the findings so far. It
// reads nothing; chanBad lets the unit and process judges add their
// evidence to the channel failure that causes them.
type judgement struct {
	f       Facts
	out     []runner.Finding
	chanBad int  // index in out of the channel failure, -1 when the channel is usable
	waiting bool // the unit is down because it waits for a missing device
}

func (r *judgement) add(f ...runner.Finding) { r.out = append(r.out, f...) }

// channelCase names the case of a fix that depends on the channel
// failure found (r.chanBad >= 0): the port missing, or only its link.
func (r *judgement) channelCase() string {
	if r.out[r.chanBad].Code == CodeChannelMissing.ID {
		return whenNoChannel
	}
	return whenNoLink
}

// installed judges whether an agent is installed; false ends the check.
func (r *judgement) installed() bool {
	p := r.f.Pres
	if p.Binary == "" && len(p.Procs) == 0 {
		if r.f.Live {
			r.add(CodeNotInstalled.New(runner.Fail, "qemu-guest-agent is not installed",
				map[string]string{"searched": strings.Join(agent.Binaries, ",")}, CodeNotInstalled.Fixf()))
		} else {
			r.add(runner.Skipf(CodeNotInstalled.ID, "qemu-guest-agent is not installed", map[string]string{"searched": strings.Join(agent.Binaries, ",")}))
		}
		return false
	}
	if p.Binary != "" {
		r.add(runner.Passf(CodeInstalled.ID, fmt.Sprintf("qemu-guest-agent %s is installed", r.f.Version),
			map[string]string{"binary": r.f.show(p.Binary), "version": r.f.Version.String(), "version_source": r.f.VersionFrom, "confdir": r.f.Confdir}))
	}
	return true
}

// channel judges the org.qemu.guest_agent.0 virtio port and its /dev link.
// It returns false when the check does not apply: no port, and not a
// QEMU/KVM guest.
func (r *judgement) channel() bool {
	p := r.f.Pres
	d := map[string]string{"ports": list(p.Ports)}
	if p.Port == "" {
		d["platform"] = p.Platform
		if !p.QEMU {
			msg := "no virtio guest-agent channel, and this does not look like a virtual machine"
			if p.VM {
				msg = "no virtio guest-agent channel, and this VM does not run on QEMU/KVM, so none is expected"
			}
			r.add(runner.Skipf(CodeNotVM.ID, msg, d))
			return false
		}
		if !p.VirtioConsole {
			d["virtio_console"] = "module not loaded"
		}
		r.chanBad = len(r.out)
		r.add(CodeChannelMissing.New(runner.Fail, "the VM has no org.qemu.guest_agent.0 virtio-serial channel", d, CodeChannelMissing.Fixf()))
		return true
	}
	d["port"] = p.Port
	if p.Link != "" {
		d["link"] = DefaultVirtioPath + " -> " + p.Link
		r.add(runner.Passf(CodeChannelOK.ID, "the guest-agent virtio channel is present as "+DefaultVirtioPath, d))
		return true
	}
	// Without the link the unit (bound to the link's device) never starts:
	// that is a failure unless some agent runs anyway on the raw port.
	st := runner.Warn
	if len(r.f.Pres.Procs) == 0 {
		st = runner.Fail
	}
	r.chanBad = len(r.out)
	r.add(CodeChannelLink.New(st, "the guest-agent port "+p.Port+" exists but "+DefaultVirtioPath+" is missing", d, CodeChannelLink.Fixf()))
	return true
}

// evidence adds the unit's and the agent's state to the channel failure,
// which is their cause.
func (r *judgement) evidence(k, v string) {
	if r.chanBad >= 0 {
		r.out[r.chanBad].Detail[k] = v
	}
}

func (r *judgement) unitState() {
	if !r.f.HasSystemd {
		return
	}
	us, err := r.f.Units, r.f.UnitsErr
	if err != nil || len(us) == 0 {
		msg := "systemd is not available; the agent is judged from /proc only"
		if err != nil && !errors.Is(err, systemd.ErrNotRunning) {
			fix := CodeUnreadable.Fixf()
			if !r.f.IsRoot {
				fix = CodeUnreadable.CaseFix("when systemd refuses a user that is not root")
			}
			r.add(CodeUnreadable.New(runner.Error, "cannot read the state of "+UnitName, map[string]string{"error": err.Error()}, fix))
			return
		}
		r.add(runner.Skipf(CodeNoSystemd.ID, msg, map[string]string{"error": fmt.Sprint(err)}))
		return
	}
	u := us[0]
	d := map[string]string{"unit": UnitName, "load_state": u.LoadState, "active_state": u.ActiveState, "sub_state": u.SubState,
		"unit_file_state": u.UnitFileState, "n_restarts": strconv.Itoa(int(u.NRestarts)), "main_pid": strconv.Itoa(int(u.MainPID))}
	state := fmt.Sprintf("%s (%s)", u.ActiveState, u.SubState)
	r.evidence("unit_state", UnitName+" "+state)
	// Without a usable channel qemu-ga exits at once, so starting the unit
	// by hand cannot help: the channel is the fix.
	noChannel := r.chanBad >= 0
	switch {
	case !u.Found():
		r.add(CodeUnitInactive.New(runner.Fail, UnitName+" is not installed", d, CodeUnitInactive.CaseFix("when the unit is not installed")))
		return
	case u.LoadState == "masked" || u.UnitFileState == "masked":
		fix := CodeUnitMasked.Fixf()
		if noChannel {
			fix = CodeUnitMasked.CaseFix(r.channelCase())
		}
		r.add(CodeUnitMasked.New(runner.Fail, UnitName+" is masked", d, fix))
		return
	case u.ActiveState != "active" && noChannel && len(r.f.Missing) > 0:
		r.waiting = true
		d["waits_for"] = strings.Join(r.f.Missing, ",")
		by, ok := r.startedBy(u)
		d["started_by"] = by
		r.evidence("unit_waits_for", d["waits_for"])
		if ok {
			r.add(runner.Skipf(CodeUnitWaits.ID, fmt.Sprintf("%s is %s: it waits for the guest-agent channel %s and starts when the channel appears",
				UnitName, state, firstPath(r.f.Missing)), d))
			break
		}
		dev, _, _ := strings.Cut(r.f.Missing[0], " (")
		r.add(CodeUnitWaits.New(runner.Warn, fmt.Sprintf("%s is %s: it waits for the guest-agent channel %s, but nothing starts it when the channel appears",
			UnitName, state, firstPath(r.f.Missing)), d,
			CodeUnitWaits.Fixf("device", dev)))
	case u.ActiveState != "active" && noChannel:
		r.add(CodeUnitInactive.New(runner.Fail, fmt.Sprintf("%s is %s (%s)", UnitName, u.ActiveState, u.SubState), d,
			CodeUnitInactive.CaseFix(r.channelCase())))
	case u.ActiveState != "active":
		r.add(CodeUnitInactive.New(runner.Fail, fmt.Sprintf("%s is %s (%s)", UnitName, u.ActiveState, u.SubState), d, CodeUnitInactive.Fixf()))
	default:
		r.add(runner.Passf(CodeUnitActive.ID, UnitName+" is active", d))
	}
	if u.UnitFileState == "disabled" && r.f.UdevRule == "" {
		r.add(CodeUnitDisabled.New(runner.Warn, UnitName+" is disabled and no udev rule starts it", d, CodeUnitDisabled.Fixf()))
	}
	if u.NRestarts >= 3 {
		r.add(CodeRestartLoop.New(runner.Warn, fmt.Sprintf("%s has restarted %d times", UnitName, u.NRestarts), d, CodeRestartLoop.Fixf()))
	}
}

// startedBy says what starts the unit once the channel's device appears:
// a udev rule (Debian, Ubuntu) or an enabled WantedBy= on a .device unit
// (RHEL, SUSE).
func (r *judgement) startedBy(u systemd.UnitState) (string, bool) {
	var by []string
	if rule := r.f.UdevRule; rule != "" {
		by = append(by, "udev rule "+rule+" (SYSTEMD_WANTS)")
	}
	if r.f.Unit != nil && u.UnitFileState == "enabled" {
		for _, w := range r.f.Unit.unit.WantedBy {
			if strings.HasSuffix(w, ".device") {
				by = append(by, "WantedBy="+w+" (enabled)")
			}
		}
	}
	if len(by) == 0 {
		return "nothing: no udev rule and no enabled WantedBy= on a device", false
	}
	return strings.Join(by, "; "), true
}

// firstPath returns the path of the first "name (path)" entry.
func firstPath(missing []string) string {
	if len(missing) == 0 {
		return ""
	}
	s := missing[0]
	if i := strings.LastIndex(s, " ("); i >= 0 {
		return strings.TrimSuffix(s[i+2:], ")")
	}
	return s
}

func (r *judgement) processFindings() {
	if len(r.f.Pres.Procs) == 0 {
		r.evidence("agent_processes", "none")
		switch {
		case r.waiting:
			// The unit waits for the channel: qga-unit-waits-for-channel
			// already says why nothing runs, and the channel is the fix.
		case r.chanBad >= 0:
			r.add(CodeProcessMissing.New(runner.Fail, "no qemu-ga process is running", nil, CodeProcessMissing.CaseFix(r.channelCase())))
		default:
			r.add(CodeProcessMissing.New(runner.Fail, "no qemu-ga process is running", nil, CodeProcessMissing.Fixf()))
		}
		return
	}
	port := portOf(r.f.Pres)
	var pids []string
	for _, p := range r.f.Pres.Procs {
		pids = append(pids, strconv.Itoa(p.PID))
		if port == nil {
			continue
		}
		for _, fd := range p.FDs {
			if fd == "/dev/"+port.dev || (port.link != "" && fd == path.Join("/dev/virtio-ports", port.link)) {
				r.add(runner.Passf(CodeProcessOK.ID, fmt.Sprintf("qemu-ga (pid %d) holds the guest-agent port open", p.PID),
					map[string]string{"pid": strconv.Itoa(p.PID), "device": fd, "cmdline": strings.Join(p.Argv, " ")}))
				return
			}
		}
	}
	d := map[string]string{"pids": strings.Join(pids, ","), "cmdline": strings.Join(r.f.Pres.Procs[0].Argv, " ")}
	if port == nil {
		d["port"] = "absent"
	} else {
		d["port"] = "/dev/" + port.dev
	}
	r.add(CodeProcessNotOnPort.New(runner.Fail, "qemu-ga is running but does not hold the guest-agent virtio port", d, CodeProcessNotOnPort.Fixf()))
}

// ignored warns about filter settings in environment files that the
// agent's command line never references (an admin editing BLOCK_RPCS on a
// RHEL 9.4 unit that only expands FILTER_RPC_ARGS, or DAEMON_ARGS under
// systemd), and about the configuration directory the build does not read.
func (r *judgement) ignored() {
	// whole is true when the agent reads no setting of the file at all.
	type ign struct {
		file, what string
		whole      bool
	}
	var found []ign
	if ui := r.f.Unit; ui != nil {
		for _, v := range filterVars {
			if ui.env[v] != "" && !slices.Contains(ui.used, v) {
				found = append(found, ign{file: ui.envFrom[v], what: v})
			}
		}
		referenced := false
		for _, f := range ui.unit.EnvironmentFiles {
			referenced = referenced || f.Path == "/etc/default/qemu-guest-agent"
		}
		if r.f.DefaultsFound && r.f.DefaultsArgs != "" && !referenced {
			found = append(found, ign{file: "/etc/default/qemu-guest-agent", what: "DAEMON_ARGS"})
		}
	}
	for _, other := range r.f.OtherConfs {
		if path.Dir(other) == r.f.Confdir || r.f.Settings.Origin["block-rpcs"] == other || r.f.Settings.Origin["allow-rpcs"] == other {
			continue
		}
		if !strings.Contains(strings.Join(r.f.Settings.Notes, " "), other) {
			found = append(found, ign{file: other, what: "the whole file (this build reads " + path.Join(r.f.Confdir, "qemu-ga.conf") + ")", whole: true})
		}
	}
	conf := path.Join(r.f.Confdir, "qemu-ga.conf")
	for _, f := range found {
		fix := CodeConfigIgnored.FixOn(r.f.Live, "setting", f.what, "file", f.file, "conf", conf)
		switch {
		case f.whole && r.f.Live:
			fix = CodeConfigIgnored.CaseFix("when a whole file is not read", "file", f.file, "conf", conf)
		case f.whole:
			fix = CodeConfigIgnored.CaseFix("when a whole file in an image is not read", "file", f.file, "conf", conf)
		}
		r.add(CodeConfigIgnored.New(runner.Warn, fmt.Sprintf("%s in %s is not used by the agent", f.what, f.file),
			map[string]string{"file": r.f.show(f.file), "setting": f.what, "settings_from": r.f.SettingsFrom}, fix))
	}
}

func (r *judgement) filter() {
	s := r.f.Settings
	f := s.Filter()
	d := map[string]string{
		"settings_from": r.f.SettingsFrom, "version": r.f.Version.String(),
		"blocked_rpcs": list(dedupe(s.Block)), "allowed_rpcs": list(dedupe(s.Allow)),
		"effective_disabled": list(f.Disabled(nil)),
	}
	for k, v := range s.Origin {
		d["origin_"+strings.ReplaceAll(k, "-", "_")] = v
	}
	if len(s.Notes) > 0 {
		d["notes"] = strings.Join(s.Notes, "; ")
	}
	if len(s.Fatal) > 0 {
		d["errors"] = strings.Join(s.Fatal, "; ")
		r.add(CodeConfigInvalid.New(runner.Fail, "qemu-ga refuses this configuration and will not start: "+s.Fatal[0], d,
			CodeConfigInvalid.FixOn(r.f.Live, "error", s.Fatal[0])))
		return
	}
	bad := false
	if len(f.Unknown) > 0 {
		dd := runner.Detail(d, "unknown_names", strings.Join(f.Unknown, ","))
		msg := "the RPC filter names commands this agent does not have: " + strings.Join(f.Unknown, ",")
		names := strings.Join(f.Unknown, ",")
		fix := CodeFilterUnknown.Fixf("names", names)
		if f.AllowList {
			fix = CodeFilterUnknown.CaseFix("in an allow-list", "names", names)
		}
		r.add(CodeFilterUnknown.New(runner.Warn, msg, dd, fix))
	}
	if off := f.Disabled(FreezeRPCs); len(off) > 0 {
		bad = true
		r.add(CodeFreezeBlocked.New(runner.Fail, "the agent's RPC filter disables "+strings.Join(off, ","), d,
			CodeFreezeBlocked.FixOn(r.f.Live, "rpcs", strings.Join(off, ","), "settings_from", r.f.SettingsFrom)))
	}
	if off := f.Disabled(KubeVirtRequiredRPCs); len(off) > 0 {
		bad = true
		r.add(CodeKubeVirtBlocked.New(runner.Fail, "KubeVirt-required RPCs are disabled: "+strings.Join(off, ","), d,
			CodeKubeVirtBlocked.FixOn(r.f.Live, "rpcs", strings.Join(off, ","), "settings_from", r.f.SettingsFrom)))
	}
	if off := f.Disabled(ExecRPCs); len(off) > 0 {
		if r.f.ProbeDeclared {
			// The config's probe: section says the platform runs exec
			// probes, and each one goes through guest-exec.
			dd := runner.Detail(d)
			dd["probe_declared_in"] = r.f.ProbeWhere
			r.add(CodeExecBlocked.New(runner.Fail, "the agent's RPC filter disables "+strings.Join(off, ",")+", which every exec probe needs", dd,
				CodeExecBlocked.FixOn(r.f.Live, "rpcs", strings.Join(off, ","), "settings_from", r.f.SettingsFrom, "probe_where", r.f.ProbeWhere)))
		} else {
			r.add(runner.Passf(CodeExecBlocked.ID, "info: guest-exec is disabled, so virtctl/automation cannot run commands through the agent (snapshots are unaffected)", d))
		}
	}
	if !bad {
		r.add(runner.Passf(CodeFilterOK.ID, "the agent's RPC filter allows every freeze and KubeVirt-required RPC", d))
	}
}

// marker looks for qga.state.isfrozen, which qemu-ga creates on freeze
// and deletes on thaw. An agent that starts and finds it believes the
// filesystems are frozen and refuses all but a few commands.
func (r *judgement) marker() {
	dir := r.f.Settings.StateDir
	p, err := r.f.Marker.Path, r.f.Marker.Err
	d := map[string]string{"marker": r.f.show(p), "statedir": dir, "statedir_from": orDefault(r.f.Settings.Origin["statedir"], "compiled-in default")}
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) {
			d["error"] = err.Error()
			r.add(CodeUnreadable.New(runner.Error, "cannot check for the frozen marker", d, markerFix(r.f.IsRoot, r.f.show(p), err)))
			return
		}
		r.add(runner.Passf(CodeNotFrozen.ID, "no leftover frozen marker in "+dir, d))
		return
	}
	mtime := r.f.Marker.Mtime
	age := r.f.Now.Sub(mtime).Round(time.Second)
	d["marker_age"] = age.String()
	d["marker_mtime"] = mtime.UTC().Format(time.RFC3339)
	if age < FrozenGrace && len(r.f.Pres.Procs) > 0 {
		r.add(CodeFrozenRecent.New(runner.Warn, "the agent froze the filesystems "+age.String()+" ago (a snapshot may be in progress)", d,
			CodeFrozenRecent.FixOn(r.f.Live, "marker", p)))
		return
	}
	r.add(CodeFrozenMarker.New(runner.Fail, "a leftover frozen marker makes the agent refuse most commands", d,
		CodeFrozenMarker.FixOn(r.f.Live, "marker", p)))
}

// markerFix is the fix for a frozen marker that could not be checked, by
// the error and by whether guestcheck runs as root: root that is denied
// has a file mode, an LSM policy or a root that squashes root in its way,
// and rerunning as root would change nothing.
func markerFix(isRoot bool, p string, err error) string {
	switch {
	case errors.Is(err, iofs.ErrPermission) && !isRoot:
		return CodeUnreadable.CaseFix("when a user may not read the frozen marker", "path", p)
	case errors.Is(err, iofs.ErrPermission):
		return CodeUnreadable.CaseFix(runner.WhenRootDenied, "path", p)
	}
	return CodeUnreadable.CaseFix("when the frozen marker cannot be read", "path", p)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// hooks judges the fsfreeze hook and the scripts it would run, and
// returns the runnable ones.
func (r *judgement) hooks() []string {
	s := r.f.Settings
	if !s.HookEnabled {
		if stranded := r.f.Stranded; len(stranded) > 0 {
			r.add(CodeHookDisabled.New(runner.Warn, "freeze hook scripts exist but the agent runs no hook",
				map[string]string{"scripts": strings.Join(stranded, ","), "settings_from": r.f.SettingsFrom},
				CodeHookDisabled.FixOn(r.f.Live, "conf", path.Join(r.f.Confdir, "qemu-ga.conf"), "scripts", strings.Join(stranded, ", "))))
			return nil
		}
		r.add(runner.Passf(CodeHookOK.ID, "no freeze hook is configured and no hook scripts are waiting", map[string]string{"settings_from": r.f.SettingsFrom}))
		return nil
	}
	d := map[string]string{"hook": s.Hook, "hook_from": s.Origin["fsfreeze-hook"]}
	st, err := r.f.Hook, r.f.HookErr
	if s.Hook == "" || err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		why := "missing"
		switch {
		case s.Hook == "":
			why = "empty path"
		case err != nil && !errors.Is(err, iofs.ErrNotExist):
			why = err.Error()
		case err == nil && !st.Mode().IsRegular():
			why = "not a regular file"
		case err == nil:
			why = "not executable"
		}
		d["problem"] = why
		r.add(CodeHookMissing.New(runner.Fail, fmt.Sprintf("the configured freeze hook %q is %s", s.Hook, why), d,
			CodeHookMissing.FixOn(r.f.Live, "hook", s.Hook)))
		return nil
	}
	d["hook_dir"] = hookDir(s.Hook)
	var scripts, skipped []string
	for _, sc := range r.f.HookScripts {
		if sc.runnable {
			scripts = append(scripts, sc.name)
		} else {
			skipped = append(skipped, sc.name+" ("+sc.why+")")
		}
	}
	d["scripts"] = list(scripts)
	if len(skipped) > 0 {
		dd := runner.Detail(d, "skipped", strings.Join(skipped, ","))
		r.add(CodeHookScriptIgnored.New(runner.Warn, "freeze hook scripts that will never run: "+strings.Join(skipped, ", "), dd,
			CodeHookScriptIgnored.Fixf("scripts", strings.Join(skipped, ", "))))
	}
	r.add(runner.Passf(CodeHookOK.ID, fmt.Sprintf("the freeze hook %s is executable and runs %d script(s)", s.Hook, len(scripts)), d))
	return scripts
}

// isAgent reports whether a denial is qemu-ga's, by its command or its
// SELinux domain.
func isAgent(a auditlog.AVC) bool {
	return a.Comm == "qemu-ga" || strings.Contains(a.SContext, ":virt_qemu_ga_")
}

// AuditWindow is how far back a qemu-ga denial counts as recent.
const AuditWindow = 7 * 24 * time.Hour

// selinux judges whether SELinux lets the agent freeze and its hook
// scripts (the runnable ones in scripts) do their work.
func (r *judgement) selinux(scripts []string) {
	se := r.f.SELinux
	d := map[string]string{"enforcing": fmt.Sprint(se.Enforcing), "enforce_from": orDefault(se.From, "no SELinux")}
	if !se.Enforcing {
		r.add(runner.Passf(CodeSELinuxOK.ID, "SELinux is not enforcing, so it cannot block freezes", d))
		return
	}
	worst := false
	var paths []string
	n := 0
	for _, a := range se.AVCs {
		if !isAgent(a) || a.Permissive || (!a.Time.IsZero() && r.f.Now.Sub(a.Time) > AuditWindow) {
			continue
		}
		n++
		p := orDefault(a.Path, "?") + " {" + strings.Join(a.Perms, " ") + "} " + a.TContext
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if n > 0 {
		worst = true
		dd := runner.Detail(d, "denials", fmt.Sprint(n), "denied", strings.Join(paths, "; "), "audit_log", r.f.show("/var/log/audit/audit.log"))
		first := strings.SplitN(paths[0], " ", 2)[0]
		r.add(CodeSELinuxDenied.New(runner.Fail, "SELinux denied qemu-ga access to "+first, dd,
			CodeSELinuxDenied.FixOn(r.f.Live, "path", first)))
	}
	if len(scripts) > 0 && se.UnconfinedOff {
		worst = true
		r.add(CodeSELinuxConfined.New(runner.Warn, "freeze hook scripts run confined because virt_qemu_ga_run_unconfined is off", runner.Detail(d),
			CodeSELinuxConfined.Fixf()))
	}
	if !worst {
		r.add(runner.Passf(CodeSELinuxOK.ID, "SELinux is enforcing and shows no recent qemu-ga denials", d))
	}
}
