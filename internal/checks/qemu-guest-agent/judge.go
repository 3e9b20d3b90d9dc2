package guestagent

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
		r.add(runner.Skipf(CodeNotLive, "virtio channel, unit and process not checked: "+f.NotLiveReason, nil))
	}
	if !r.installed() {
		return r.out
	}
	if f.Live {
		r.unitState()
		r.processFindings()
	}
	if f.Interrupted {
		return append(r.out, runner.Errorf(CodeUnreadable, "the check's deadline passed", nil, "raise checks.qemu-guest-agent.timeout in the config file"))
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

// inImage ends a fix of the agent's files: restart, the running system's
// words, or "in the image", where a restart would be the host's agent.
func (r *judgement) inImage(restart string) string {
	return runner.Fix(r.f.Live, restart, " in the image")
}

// installed judges whether an agent is installed; false ends the check.
func (r *judgement) installed() bool {
	p := r.f.Pres
	if p.Binary == "" && len(p.Procs) == 0 {
		if r.f.Live {
			r.add(runner.New(runner.Fail, CodeNotInstalled, "qemu-guest-agent is not installed",
				map[string]string{"searched": strings.Join(agent.Binaries, ",")},
				crash+"install the qemu-guest-agent package in the image (apt/dnf/zypper install qemu-guest-agent) and enable its service"))
		} else {
			r.add(runner.Skipf(CodeNotInstalled, "qemu-guest-agent is not installed", map[string]string{"searched": strings.Join(agent.Binaries, ",")}))
		}
		return false
	}
	if p.Binary != "" {
		r.add(runner.Passf(CodeInstalled, fmt.Sprintf("qemu-guest-agent %s is installed", r.f.Version),
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
			r.add(runner.Skipf(CodeNotVM, msg, d))
			return false
		}
		if !p.VirtioConsole {
			d["virtio_console"] = "module not loaded"
		}
		r.chanBad = len(r.out)
		r.add(runner.New(runner.Fail, CodeChannelMissing, "the VM has no org.qemu.guest_agent.0 virtio-serial channel", d,
			crash+agent.ChannelFix))
		return true
	}
	d["port"] = p.Port
	if p.Link != "" {
		d["link"] = DefaultVirtioPath + " -> " + p.Link
		r.add(runner.Passf(CodeChannelOK, "the guest-agent virtio channel is present as "+DefaultVirtioPath, d))
		return true
	}
	// Without the link the unit (bound to the link's device) never starts:
	// that is a failure unless some agent runs anyway on the raw port.
	st := runner.Warn
	if len(r.f.Pres.Procs) == 0 {
		st = runner.Fail
	}
	r.chanBad = len(r.out)
	r.add(runner.New(st, CodeChannelLink, "the guest-agent port "+p.Port+" exists but "+DefaultVirtioPath+" is missing", d,
		"the agent opens "+DefaultVirtioPath+" by default and its unit waits for that device: make sure udev runs with its 50-udev-default.rules (run `udevadm trigger --subsystem-match=virtio-ports`), otherwise snapshots will be crash-consistent"))
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
			fix := "check that the system bus or systemd's private socket is reachable"
			if !r.f.IsRoot {
				fix += " (run as root)"
			}
			r.add(runner.Errorf(CodeUnreadable, "cannot read the state of "+UnitName, map[string]string{"error": err.Error()}, fix))
			return
		}
		r.add(runner.Skipf(CodeNoSystemd, msg, map[string]string{"error": fmt.Sprint(err)}))
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
		r.add(runner.New(runner.Fail, CodeUnitInactive, UnitName+" is not installed", d,
			crash+"install the distribution's qemu-guest-agent package, which ships the unit"))
		return
	case u.LoadState == "masked" || u.UnitFileState == "masked":
		fix := "run `systemctl unmask " + UnitName + " && systemctl start " + UnitName + "`"
		if noChannel {
			fix = "run `systemctl unmask " + UnitName + "` and fix the guest-agent channel (see " + r.out[r.chanBad].Code + "); the unit starts with the channel"
		}
		r.add(runner.New(runner.Fail, CodeUnitMasked, UnitName+" is masked", d, crash+fix))
		return
	case u.ActiveState != "active" && noChannel && len(r.f.Missing) > 0:
		r.waiting = true
		d["waits_for"] = strings.Join(r.f.Missing, ",")
		by, ok := r.startedBy(u)
		d["started_by"] = by
		r.evidence("unit_waits_for", d["waits_for"])
		if ok {
			r.add(runner.Skipf(CodeUnitWaits, fmt.Sprintf("%s is %s: it waits for the guest-agent channel %s and starts when the channel appears",
				UnitName, state, firstPath(r.f.Missing)), d))
			break
		}
		dev, _, _ := strings.Cut(r.f.Missing[0], " (")
		r.add(runner.New(runner.Warn, CodeUnitWaits, fmt.Sprintf("%s is %s: it waits for the guest-agent channel %s, but nothing starts it when the channel appears",
			UnitName, state, firstPath(r.f.Missing)), d,
			"have systemd start the agent with its device: `systemctl add-wants '"+dev+"' "+UnitName+"` (or reinstall the package's udev rule); otherwise the agent stays down after the channel is added"))
	case u.ActiveState != "active" && noChannel:
		r.add(runner.New(runner.Fail, CodeUnitInactive, fmt.Sprintf("%s is %s (%s)", UnitName, u.ActiveState, u.SubState), d,
			crash+"fix the guest-agent channel first (see "+r.out[r.chanBad].Code+"): qemu-ga exits at once without it; then run `systemctl restart "+UnitName+
				"`, since this unit is not bound to the channel's device (no BindsTo=) and does not wait for it"))
	case u.ActiveState != "active":
		r.add(runner.New(runner.Fail, CodeUnitInactive, fmt.Sprintf("%s is %s (%s)", UnitName, u.ActiveState, u.SubState), d,
			crash+"start it with `systemctl start "+UnitName+"` and read `journalctl -u "+UnitName+"` for why it stopped"))
	default:
		r.add(runner.Passf(CodeUnitActive, UnitName+" is active", d))
	}
	if u.UnitFileState == "disabled" && r.f.UdevRule == "" {
		r.add(runner.New(runner.Warn, CodeUnitDisabled, UnitName+" is disabled and no udev rule starts it", d,
			"run `systemctl enable "+UnitName+"` so the agent starts at every boot; without it the next boot's snapshots are crash-consistent"))
	}
	if u.NRestarts >= 3 {
		r.add(runner.New(runner.Warn, CodeRestartLoop, fmt.Sprintf("%s has restarted %d times", UnitName, u.NRestarts), d,
			"read `journalctl -u "+UnitName+"` for why the agent exits: while it restarts, a snapshot's freeze request can fail or hit a stale frozen state"))
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
			r.add(runner.New(runner.Fail, CodeProcessMissing, "no qemu-ga process is running", nil,
				crash+"fix the guest-agent channel first (see "+r.out[r.chanBad].Code+"): qemu-ga exits at once without it; then start the agent"))
		default:
			r.add(runner.New(runner.Fail, CodeProcessMissing, "no qemu-ga process is running", nil,
				crash+"start the agent (`systemctl start "+UnitName+"`); KubeVirt's AgentConnected condition and every quiesced snapshot need it holding the virtio port"))
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
				r.add(runner.Passf(CodeProcessOK, fmt.Sprintf("qemu-ga (pid %d) holds the guest-agent port open", p.PID),
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
	r.add(runner.New(runner.Fail, CodeProcessNotOnPort, "qemu-ga is running but does not hold the guest-agent virtio port", d,
		crash+"run the agent with its default method (virtio-serial on "+DefaultVirtioPath+"): remove -m/-p overrides from its command line and configuration, and restart it"))
}

// ignored warns about filter settings in environment files that the
// agent's command line never references (an admin editing BLOCK_RPCS on a
// RHEL 9.4 unit that only expands FILTER_RPC_ARGS, or DAEMON_ARGS under
// systemd), and about the configuration directory the build does not read.
func (r *judgement) ignored() {
	type ign struct{ file, what string }
	var found []ign
	if ui := r.f.Unit; ui != nil {
		for _, v := range filterVars {
			if ui.env[v] != "" && !slices.Contains(ui.used, v) {
				found = append(found, ign{ui.envFrom[v], v})
			}
		}
		referenced := false
		for _, f := range ui.unit.EnvironmentFiles {
			referenced = referenced || f.Path == "/etc/default/qemu-guest-agent"
		}
		if r.f.DefaultsFound && r.f.DefaultsArgs != "" && !referenced {
			found = append(found, ign{"/etc/default/qemu-guest-agent", "DAEMON_ARGS"})
		}
	}
	for _, other := range r.f.OtherConfs {
		if path.Dir(other) == r.f.Confdir || r.f.Settings.Origin["block-rpcs"] == other || r.f.Settings.Origin["allow-rpcs"] == other {
			continue
		}
		if !strings.Contains(strings.Join(r.f.Settings.Notes, " "), other) {
			found = append(found, ign{other, "the whole file (this build reads " + path.Join(r.f.Confdir, "qemu-ga.conf") + ")"})
		}
	}
	for _, f := range found {
		r.add(runner.New(runner.Warn, CodeConfigIgnored, fmt.Sprintf("%s in %s is not used by the agent", f.what, f.file),
			map[string]string{"file": r.f.show(f.file), "setting": f.what, "settings_from": r.f.SettingsFrom},
			"move the setting to where the agent reads it (the variable its unit's ExecStart= expands, or "+path.Join(r.f.Confdir, "qemu-ga.conf")+"), then restart the agent; otherwise the filter you meant to apply to snapshot RPCs is not in force"))
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
		r.add(runner.New(runner.Fail, CodeConfigInvalid, "qemu-ga refuses this configuration and will not start: "+s.Fatal[0], d,
			crash+"fix the agent's configuration as the error says (qemu-ga exits at start-up with it)"+r.inImage(", then restart the agent")))
		return
	}
	bad := false
	if len(f.Unknown) > 0 {
		dd := runner.Detail(d, "unknown_names", strings.Join(f.Unknown, ","))
		msg := "the RPC filter names commands this agent does not have: " + strings.Join(f.Unknown, ",")
		fix := "qemu-ga compares names exactly (no wildcards, no spaces after commas): list every command by its full name, e.g. guest-file-open,guest-file-close instead of guest-file-*"
		if f.AllowList {
			fix += "; in an allow-list an unknown name allows nothing"
		} else {
			fix += "; in a block-list an unknown name blocks nothing"
		}
		r.add(runner.New(runner.Warn, CodeFilterUnknown, msg, dd, fix))
	}
	if off := f.Disabled(FreezeRPCs); len(off) > 0 {
		bad = true
		r.add(runner.New(runner.Fail, CodeFreezeBlocked, "the agent's RPC filter disables "+strings.Join(off, ","), d,
			crash+"remove "+strings.Join(off, ",")+" from the block-list (or add them to the allow-list) where settings_from says"+r.inImage(", then restart the agent")))
	}
	if off := f.Disabled(KubeVirtRequiredRPCs); len(off) > 0 {
		bad = true
		r.add(runner.New(runner.Fail, CodeKubeVirtBlocked, "KubeVirt-required RPCs are disabled: "+strings.Join(off, ","), d,
			"KubeVirt marks this agent AgentVersionNotSupported and Harvester shows no guest information; enable "+strings.Join(off, ",")+" in the agent's filter (or upgrade an agent that lacks them)"+r.inImage(" and restart it")))
	}
	if off := f.Disabled(ExecRPCs); len(off) > 0 {
		if r.f.ProbeDeclared {
			// The config's probe: section says the platform runs exec
			// probes, and each one goes through guest-exec.
			dd := runner.Detail(d)
			dd["probe_declared_in"] = r.f.ProbeWhere
			r.add(runner.New(runner.Fail, CodeExecBlocked, "the agent's RPC filter disables "+strings.Join(off, ",")+", which every exec probe needs", dd,
				"KubeVirt runs readinessProbe.exec and livenessProbe.exec through guest-exec, so every such probe fails and the VMI never becomes Ready (or is restarted): remove "+
					strings.Join(off, ",")+" from the block-list (or add them to the allow-list) where settings_from says"+r.inImage(" and restart the agent")+", or remove the probe: section from the guestcheck config if no exec probe is used"))
		} else {
			r.add(runner.Passf(CodeExecBlocked, "info: guest-exec is disabled, so virtctl/automation cannot run commands through the agent (snapshots are unaffected)", d))
		}
	}
	if !bad {
		r.add(runner.Passf(CodeFilterOK, "the agent's RPC filter allows every freeze and KubeVirt-required RPC", d))
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
			r.add(runner.Errorf(CodeUnreadable, "cannot check for the frozen marker", d, runner.ReadFix(r.f.IsRoot, r.f.show(p), err)))
			return
		}
		r.add(runner.Passf(CodeNotFrozen, "no leftover frozen marker in "+dir, d))
		return
	}
	mtime := r.f.Marker.Mtime
	age := r.f.Now.Sub(mtime).Round(time.Second)
	d["marker_age"] = age.String()
	d["marker_mtime"] = mtime.UTC().Format(time.RFC3339)
	if age < FrozenGrace && len(r.f.Pres.Procs) > 0 {
		r.add(runner.New(runner.Warn, CodeFrozenRecent, "the agent froze the filesystems "+age.String()+" ago (a snapshot may be in progress)", d,
			runner.Fix(r.f.Live, "if no snapshot or backup is running, thaw with `virsh domfsthaw` / `virtctl unfreeze` from the host; a VM left frozen stalls every write and the next snapshot's freeze fails",
				"the image was captured with the agent's frozen marker: remove "+p+" from the image, or capture it again from a thawed VM")))
		return
	}
	r.add(runner.New(runner.Fail, CodeFrozenMarker, "a leftover frozen marker makes the agent refuse most commands", d,
		crash+runner.Fix(r.f.Live, "thaw from the host (`virtctl unfreeze`, `virsh domfsthaw`), or if nothing is frozen remove "+p+" and restart the agent",
			"remove "+p+" from the image: every clone's agent would start refusing commands")))
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
			r.add(runner.New(runner.Warn, CodeHookDisabled, "freeze hook scripts exist but the agent runs no hook", map[string]string{"scripts": strings.Join(stranded, ","), "settings_from": r.f.SettingsFrom},
				"enable the hook with -F (or fsfreeze-hook= in "+path.Join(r.f.Confdir, "qemu-ga.conf")+")"+r.inImage(" and restart the agent")+"; until then these scripts never run and applications are not quiesced before snapshots"))
			return nil
		}
		r.add(runner.Passf(CodeHookOK, "no freeze hook is configured and no hook scripts are waiting", map[string]string{"settings_from": r.f.SettingsFrom}))
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
		r.add(runner.New(runner.Fail, CodeHookMissing, fmt.Sprintf("the configured freeze hook %q is %s", s.Hook, why), d,
			crash+"qemu-ga fails every freeze when its hook cannot be executed: install the hook (mode 755) or remove -F/fsfreeze-hook"+r.inImage(", then restart the agent")))
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
		r.add(runner.New(runner.Warn, CodeHookScriptIgnored, "freeze hook scripts that will never run: "+strings.Join(skipped, ", "), dd,
			"make the scripts executable (chmod 755) and drop backup suffixes, or delete them; the hook skips them silently, so the application they should quiesce is snapshotted mid-write"))
	}
	r.add(runner.Passf(CodeHookOK, fmt.Sprintf("the freeze hook %s is executable and runs %d script(s)", s.Hook, len(scripts)), d))
	return scripts
}

// AuditWindow is how far back a qemu-ga denial counts as recent.
const AuditWindow = 7 * 24 * time.Hour

// selinux judges whether SELinux lets the agent freeze and its hook
// scripts (the runnable ones in scripts) do their work.
func (r *judgement) selinux(scripts []string) {
	se := r.f.SELinux
	d := map[string]string{"enforcing": fmt.Sprint(se.Enforcing), "enforce_from": orDefault(se.From, "no SELinux")}
	if !se.Enforcing {
		r.add(runner.Passf(CodeSELinuxOK, "SELinux is not enforcing, so it cannot block freezes", d))
		return
	}
	worst := false
	var paths []string
	n := 0
	for _, a := range se.AVCs {
		if !a.IsAgent() || a.Permissive || (!a.Time.IsZero() && r.f.Now.Sub(a.Time) > AuditWindow) {
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
		r.add(runner.New(runner.Fail, CodeSELinuxDenied, "SELinux denied qemu-ga access to "+first, dd,
			crash+runner.Fix(r.f.Live, "allow the access (`ausearch -c qemu-ga --raw | audit2allow -M qga-local && semodule -i qga-local.pp`, or fix the mountpoint's label/owner) and retry a freeze with `virsh domfsfreeze`",
				"allow the access in the image's build (an SELinux module made from the denials in its audit log, or the mountpoint's label and owner), then retry a freeze on a booted clone with `virsh domfsfreeze`")))
	}
	if len(scripts) > 0 && se.UnconfinedOff {
		worst = true
		r.add(runner.New(runner.Warn, CodeSELinuxConfined, "freeze hook scripts run confined because virt_qemu_ga_run_unconfined is off", runner.Detail(d),
			"run `setsebool -P virt_qemu_ga_run_unconfined on` so hook scripts (database flushes) may do their work; confined, they fail and snapshots are only filesystem-consistent"))
	}
	if !worst {
		r.add(runner.Passf(CodeSELinuxOK, "SELinux is enforcing and shows no recent qemu-ga denials", d))
	}
}
