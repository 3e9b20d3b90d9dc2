package guestagent

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/guestfile/envfile"
	"github.com/guestcheck/guestcheck/internal/guestfile/ini"
	"github.com/guestcheck/guestcheck/internal/guestfile/selinuxconfig"
)

// unitInfo is the unit file with its drop-ins and environment expanded.
type unitInfo struct {
	files   []string
	unit    Unit
	env     map[string]string
	envFrom map[string]string // variable -> file that set it
	used    []string
	argv    []string
	err     error
}

// readUnit reads qemu-guest-agent.service the way systemd layers it: the
// first unit file found in /etc, /run, /usr/lib, /lib, then every
// drop-in by name (a drop-in in an earlier directory shadows a later one).
func (r *run) readUnit() *unitInfo {
	ui := &unitInfo{env: map[string]string{}, envFrom: map[string]string{}}
	for _, d := range unitDirs {
		p := d + "/" + UnitName
		if b, err := r.env.Root.ReadFile(p); err == nil {
			f, _ := ini.Parse(p, b, ini.Systemd) // systemd skips what it cannot read
			ui.unit.Apply(f)
			ui.files = append(ui.files, p)
			break
		}
	}
	if len(ui.files) == 0 {
		return nil
	}
	dropins := map[string]string{}
	for i := len(unitDirs) - 1; i >= 0; i-- {
		dir := unitDirs[i] + "/" + UnitName + ".d"
		ents, _ := r.env.Root.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name, ".conf") {
				dropins[e.Name] = dir + "/" + e.Name
			}
		}
	}
	names := make([]string, 0, len(dropins))
	for n := range dropins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if b, err := r.env.Root.ReadFile(dropins[n]); err == nil {
			f, _ := ini.Parse(dropins[n], b, ini.Systemd)
			ui.unit.Apply(f)
			ui.files = append(ui.files, dropins[n])
		}
	}
	for k, v := range ui.unit.Environment {
		ui.env[k], ui.envFrom[k] = v, "Environment="
	}
	// EnvironmentFile= overrides Environment= for the same variable.
	for _, ef := range ui.unit.EnvironmentFiles {
		b, err := r.env.Root.ReadFile(ef.Path)
		if err != nil {
			continue
		}
		vars, _ := envfile.Parse(ef.Path, b, envfile.Systemd)
		for k, v := range vars {
			ui.env[k], ui.envFrom[k] = v.Value, ef.Path
		}
	}
	ui.argv, ui.used, ui.err = SplitExec(ui.unit.ExecStart, ui.env)
	return ui
}

// resolve works out the agent's argv, environment and configuration file:
// from the running process when there is one (its /proc entries are what
// it really uses), else from the unit file.
func (r *run) resolve() {
	ui := r.ui
	var argv []string
	env := map[string]string{}
	switch {
	case len(r.procs) > 0:
		argv, env = r.procs[0].argv, r.procs[0].env
		r.setFrom = fmt.Sprintf("process %d (/proc/%d/cmdline)", r.procs[0].pid, r.procs[0].pid)
	case ui != nil && ui.err == nil && ui.unit.ExecStart != "":
		argv, env = ui.argv, ui.env
		r.setFrom = "unit " + strings.Join(ui.files, " + ")
	default:
		if b, err := r.env.Root.ReadFile("/etc/default/qemu-guest-agent"); err == nil && ui == nil {
			// No unit: the init script sources the file.
			vars, _ := envfile.Parse("/etc/default/qemu-guest-agent", b, envfile.Shell)
			argv = append([]string{r.binary}, strings.Fields(vars["DAEMON_ARGS"].Value)...)
			r.setFrom = "/etc/default/qemu-guest-agent (DAEMON_ARGS, no systemd unit)"
		} else {
			argv = []string{r.binary}
			r.setFrom = "defaults (no process and no unit file found)"
		}
	}
	var fatal []string
	if ui != nil && ui.err != nil {
		fatal = append(fatal, "ExecStart of "+ui.files[0]+": "+ui.err.Error())
	}
	var args Args
	if len(argv) > 0 {
		var err error
		args, err = ParseArgs(r.version, argv[1:])
		if err != nil {
			fatal = append(fatal, "command line: "+err.Error())
		}
	}
	confPath, required := path.Join(r.confdir, "qemu-ga.conf"), false
	if c, ok := env["QGA_CONF"]; ok && c != "" {
		confPath = c
	}
	if args.Config != "" {
		confPath, required = args.Config, true
	}
	var kf *KeyFile
	b, err := r.env.Root.ReadFile(confPath)
	switch {
	case err == nil:
		kf, err = LoadKeyFile(confPath, b)
		if err != nil {
			fatal = append(fatal, confPath+": "+err.Error())
			kf = nil
		}
	case errors.Is(err, iofs.ErrNotExist) && !required:
	default:
		fatal = append(fatal, confPath+": "+err.Error())
	}
	r.settings = Merge(r.version, r.confdir, kf, confPath, args)
	r.settings.Fatal = append(fatal, r.settings.Fatal...)
	if kf != nil {
		r.settings.Notes = append(r.settings.Notes, "configuration file "+confPath+" applied")
	}
	r.ignored(ui)
}

// ignored warns about filter settings in environment files that the
// agent's command line never references (an admin editing BLOCK_RPCS on a
// RHEL 9.4 unit that only expands FILTER_RPC_ARGS, or DAEMON_ARGS under
// systemd), and about the configuration directory the build does not read.
func (r *run) ignored(ui *unitInfo) {
	type ign struct{ file, what string }
	var found []ign
	if ui != nil {
		for _, v := range filterVars {
			if ui.env[v] != "" && !slices.Contains(ui.used, v) {
				found = append(found, ign{ui.envFrom[v], v})
			}
		}
		if b, err := r.env.Root.ReadFile("/etc/default/qemu-guest-agent"); err == nil {
			vars, _ := envfile.Parse("/etc/default/qemu-guest-agent", b, envfile.Shell)
			referenced := false
			for _, f := range ui.unit.EnvironmentFiles {
				referenced = referenced || f.Path == "/etc/default/qemu-guest-agent"
			}
			if vars["DAEMON_ARGS"].Value != "" && !referenced {
				found = append(found, ign{"/etc/default/qemu-guest-agent", "DAEMON_ARGS"})
			}
		}
	}
	for _, other := range []string{"/etc/qemu/qemu-ga.conf", "/etc/qemu-kvm/qemu-ga.conf"} {
		if path.Dir(other) == r.confdir || r.settings.Origin["block-rpcs"] == other || r.settings.Origin["allow-rpcs"] == other {
			continue
		}
		if r.env.Root.Exists(other) && !strings.Contains(strings.Join(r.settings.Notes, " "), other) {
			found = append(found, ign{other, "the whole file (this build reads " + path.Join(r.confdir, "qemu-ga.conf") + ")"})
		}
	}
	for _, f := range found {
		r.add(check.New(check.Warn, CodeConfigIgnored, fmt.Sprintf("%s in %s is not used by the agent", f.what, f.file),
			map[string]string{"file": r.env.Root.Display(f.file), "setting": f.what, "settings_from": r.setFrom},
			"move the setting to where the agent reads it (the variable its unit's ExecStart= expands, or "+path.Join(r.confdir, "qemu-ga.conf")+"), then restart the agent; otherwise the filter you meant to apply to snapshot RPCs is not in force"))
	}
}

func (r *run) filter() {
	s := r.settings
	f := s.Filter()
	d := map[string]string{
		"settings_from": r.setFrom, "version": r.version.String(),
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
		r.add(check.New(check.Fail, CodeConfigInvalid, "qemu-ga refuses this configuration and will not start: "+s.Fatal[0], d,
			crash+"fix the agent's configuration as the error says (qemu-ga exits at start-up with it), then restart the agent"))
		return
	}
	bad := false
	if len(f.Unknown) > 0 {
		dd := copyMap(d)
		dd["unknown_names"] = strings.Join(f.Unknown, ",")
		msg := "the RPC filter names commands this agent does not have: " + strings.Join(f.Unknown, ",")
		fix := "qemu-ga compares names exactly (no wildcards, no spaces after commas): list every command by its full name, e.g. guest-file-open,guest-file-close instead of guest-file-*"
		if f.AllowList {
			fix += "; in an allow-list an unknown name allows nothing"
		} else {
			fix += "; in a block-list an unknown name blocks nothing"
		}
		r.add(check.New(check.Warn, CodeFilterUnknown, msg, dd, fix))
	}
	if off := f.Disabled(FreezeRPCs); len(off) > 0 {
		bad = true
		r.add(check.New(check.Fail, CodeFreezeBlocked, "the agent's RPC filter disables "+strings.Join(off, ","), d,
			crash+"remove "+strings.Join(off, ",")+" from the block-list (or add them to the allow-list) where settings_from says, then restart the agent"))
	}
	if off := f.Disabled(KubeVirtRequiredRPCs); len(off) > 0 {
		bad = true
		r.add(check.New(check.Fail, CodeKubeVirtBlocked, "KubeVirt-required RPCs are disabled: "+strings.Join(off, ","), d,
			"KubeVirt marks this agent AgentVersionNotSupported and Harvester shows no guest information; enable "+strings.Join(off, ",")+" in the agent's filter (or upgrade an agent that lacks them) and restart it"))
	}
	if off := f.Disabled(ExecRPCs); len(off) > 0 {
		if r.env.Config != nil && r.env.Config.Probe.Declared {
			// The config's probe: section says the platform runs exec
			// probes, and each one goes through guest-exec.
			dd := copyMap(d)
			dd["probe_declared_in"] = r.env.Config.Probe.Where(-1)
			r.add(check.New(check.Fail, CodeExecBlocked, "the agent's RPC filter disables "+strings.Join(off, ",")+", which every exec probe needs", dd,
				"KubeVirt runs readinessProbe.exec and livenessProbe.exec through guest-exec, so every such probe fails and the VMI never becomes Ready (or is restarted): remove "+
					strings.Join(off, ",")+" from the block-list (or add them to the allow-list) where settings_from says and restart the agent, or remove the probe: section from the guestcheck config if no exec probe is used"))
		} else {
			r.add(check.Passf(CodeExecBlocked, "info: guest-exec is disabled, so virtctl/automation cannot run commands through the agent (snapshots are unaffected)", d))
		}
	}
	if !bad {
		r.add(check.Passf(CodeFilterOK, "the agent's RPC filter allows every freeze and KubeVirt-required RPC", d))
	}
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// marker looks for qga.state.isfrozen, which qemu-ga creates on freeze
// and deletes on thaw. An agent that starts and finds it believes the
// filesystems are frozen and refuses all but a few commands.
func (r *run) marker() {
	dir := r.settings.StateDir
	p := path.Join(dir, FrozenMarker)
	st, err := r.env.Root.Stat(p)
	d := map[string]string{"marker": r.env.Root.Display(p), "statedir": dir, "statedir_from": orDefault(r.settings.Origin["statedir"], "compiled-in default")}
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) {
			d["error"] = err.Error()
			r.add(check.Errorf(CodeUnreadable, "cannot check for the frozen marker", d, "run guestcheck as root"))
			return
		}
		r.add(check.Passf(CodeNotFrozen, "no leftover frozen marker in "+dir, d))
		return
	}
	age := r.env.Now().Sub(st.Mtime).Round(time.Second)
	d["marker_age"] = age.String()
	d["marker_mtime"] = st.Mtime.UTC().Format(time.RFC3339)
	if age < FrozenGrace && len(r.procs) > 0 {
		r.add(check.New(check.Warn, CodeFrozenRecent, "the agent froze the filesystems "+age.String()+" ago (a snapshot may be in progress)", d,
			"if no snapshot or backup is running, thaw with `virsh domfsthaw` / `virtctl unfreeze` from the host; a VM left frozen stalls every write and the next snapshot's freeze fails"))
		return
	}
	r.add(check.New(check.Fail, CodeFrozenMarker, "a leftover frozen marker makes the agent refuse most commands", d,
		crash+"thaw from the host (`virtctl unfreeze`, `virsh domfsthaw`), or if nothing is frozen remove "+p+" and restart the agent"))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// hooks judges the fsfreeze hook and the scripts it would run.
func (r *run) hooks() {
	s := r.settings
	if !s.HookEnabled {
		var stranded []string
		for _, dir := range dedupe([]string{path.Join(r.confdir, "fsfreeze-hook.d"), "/etc/qemu/fsfreeze-hook.d", "/etc/qemu-ga/fsfreeze-hook.d", "/etc/qemu-kvm/fsfreeze-hook.d"}) {
			for _, sc := range r.listScripts(dir) {
				if sc.runnable {
					stranded = append(stranded, path.Join(dir, sc.name))
				}
			}
		}
		if len(stranded) > 0 {
			r.add(check.New(check.Warn, CodeHookDisabled, "freeze hook scripts exist but the agent runs no hook", map[string]string{"scripts": strings.Join(stranded, ","), "settings_from": r.setFrom},
				"enable the hook with -F (or fsfreeze-hook= in "+path.Join(r.confdir, "qemu-ga.conf")+") and restart the agent; until then these scripts never run and applications are not quiesced before snapshots"))
			return
		}
		r.add(check.Passf(CodeHookOK, "no freeze hook is configured and no hook scripts are waiting", map[string]string{"settings_from": r.setFrom}))
		return
	}
	d := map[string]string{"hook": s.Hook, "hook_from": s.Origin["fsfreeze-hook"]}
	st, err := r.env.Root.Stat(s.Hook)
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
		r.add(check.New(check.Fail, CodeHookMissing, fmt.Sprintf("the configured freeze hook %q is %s", s.Hook, why), d,
			crash+"qemu-ga fails every freeze when its hook cannot be executed: install the hook (chmod 755) or remove -F/fsfreeze-hook, then restart the agent"))
		return
	}
	r.hookDir = path.Join(path.Dir(s.Hook), "fsfreeze-hook.d")
	d["hook_dir"] = r.hookDir
	var skipped []string
	for _, sc := range r.listScripts(r.hookDir) {
		if sc.runnable {
			r.scripts = append(r.scripts, sc.name)
		} else {
			skipped = append(skipped, sc.name+" ("+sc.why+")")
		}
	}
	d["scripts"] = list(r.scripts)
	if len(skipped) > 0 {
		dd := copyMap(d)
		dd["skipped"] = strings.Join(skipped, ",")
		r.add(check.New(check.Warn, CodeHookScriptIgnored, "freeze hook scripts that will never run: "+strings.Join(skipped, ", "), dd,
			"make the scripts executable (chmod 755) and drop backup suffixes, or delete them; the hook skips them silently, so the application they should quiesce is snapshotted mid-write"))
	}
	r.add(check.Passf(CodeHookOK, fmt.Sprintf("the freeze hook %s is executable and runs %d script(s)", s.Hook, len(r.scripts)), d))
}

type script struct {
	name     string
	runnable bool
	why      string
}

func (r *run) listScripts(dir string) []script {
	ents, err := r.env.Root.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []script
	for _, e := range ents {
		sc := script{name: e.Name}
		st, err := r.env.Root.Stat(dir + "/" + e.Name)
		switch {
		case hasIgnoredSuffix(e.Name):
			sc.why = "ignored suffix"
		case err != nil || st.IsDir():
			continue
		case st.Mode().Perm()&0o111 == 0:
			sc.why = "not executable"
		default:
			sc.runnable = true
		}
		out = append(out, sc)
	}
	return out
}

func hasIgnoredSuffix(n string) bool {
	for _, s := range hookIgnoreExt {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// AuditWindow is how far back a qemu-ga denial counts as recent.
const AuditWindow = 7 * 24 * time.Hour

func (r *run) selinux() {
	enforcing, from := false, ""
	if r.env.Live {
		if b, err := r.env.Root.ReadFile("/sys/fs/selinux/enforce"); err == nil {
			enforcing, from = strings.TrimSpace(string(b)) == "1", "/sys/fs/selinux/enforce"
		}
	} else if b, err := r.env.Root.ReadFile("/etc/selinux/config"); err == nil {
		enforcing, from = selinuxconfig.Parse(b).Mode == "enforcing", "/etc/selinux/config"
	}
	d := map[string]string{"enforcing": fmt.Sprint(enforcing), "enforce_from": orDefault(from, "no SELinux")}
	if !enforcing {
		r.add(check.Passf(CodeSELinuxOK, "SELinux is not enforcing, so it cannot block freezes", d))
		return
	}
	worst := false
	if b, err := r.env.Root.ReadFile("/var/log/audit/audit.log"); err == nil {
		var paths []string
		n := 0
		for _, a := range ParseAuditLog(b) {
			if !a.IsAgent() || a.Permissive || (!a.Time.IsZero() && r.env.Now().Sub(a.Time) > AuditWindow) {
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
			dd := copyMap(d)
			dd["denials"] = fmt.Sprint(n)
			dd["denied"] = strings.Join(paths, "; ")
			dd["audit_log"] = r.env.Root.Display("/var/log/audit/audit.log")
			first := strings.SplitN(paths[0], " ", 2)[0]
			r.add(check.New(check.Fail, CodeSELinuxDenied, "SELinux denied qemu-ga access to "+first, dd,
				crash+"allow the access (`ausearch -c qemu-ga --raw | audit2allow -M qga-local && semodule -i qga-local.pp`, or fix the mountpoint's label/owner) and retry a freeze with `virsh domfsfreeze`"))
		}
	}
	if len(r.scripts) > 0 {
		b, err := r.env.Root.ReadFile("/sys/fs/selinux/booleans/virt_qemu_ga_run_unconfined")
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "0") {
			worst = true
			r.add(check.New(check.Warn, CodeSELinuxConfined, "freeze hook scripts run confined because virt_qemu_ga_run_unconfined is off", copyMap(d),
				"run `setsebool -P virt_qemu_ga_run_unconfined on` so hook scripts (database flushes) may do their work; confined, they fail and snapshots are only filesystem-consistent"))
		}
	}
	if !worst {
		r.add(check.Passf(CodeSELinuxOK, "SELinux is enforcing and shows no recent qemu-ga denials", d))
	}
}
