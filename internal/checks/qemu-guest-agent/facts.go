package qemuguestagent

import (
	"context"
	"errors"
	iofs "io/fs"
	"path"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/systemd"
	"github.com/guestcheck/guestcheck/internal/parse/auditlog"
	"github.com/guestcheck/guestcheck/internal/parse/dpkgstatus"
	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/parse/osrelease"
	"github.com/guestcheck/guestcheck/internal/parse/selinuxconfig"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Facts is everything the qemu-guest-agent check judges, gathered once
// through runner.Env (Gather), so that Judge is a pure function of it and
// tests can build one without a filesystem.
type Facts struct {
	// Live is true when the root is the running system; NotLiveReason is
	// the skip message when it is not.
	Live          bool
	NotLiveReason string
	// IsRoot is true when guestcheck runs as root (Env.IsRoot).
	IsRoot bool
	// Now is the clock the marker's and the denials' ages are taken at.
	Now time.Time
	// Pres is the shared probe: binary, port, processes, platform.
	Pres *agent.Presence
	// Version is the installed agent's; VersionFrom says where it was
	// read. Confdir is its compiled-in configuration directory.
	Version     Version
	VersionFrom string
	Confdir     string
	// Unit is qemu-guest-agent.service with its drop-ins and environment;
	// nil when no unit file was found.
	Unit *unitInfo
	// HasSystemd is false when the Env has no systemd client; Units and
	// UnitsErr are then what it answered for UnitName.
	HasSystemd bool
	Units      []systemd.UnitState
	UnitsErr   error
	// Missing lists the device units the unit waits for whose device node
	// does not exist, "name (path)".
	Missing []string
	// UdevRule is the udev rule file that starts the unit, "" when none.
	// Looked for only when the unit is down or disabled.
	UdevRule string
	// Interrupted is true when the deadline passed after the unit was
	// asked for: nothing after it was read.
	Interrupted bool
	// DefaultsFound is true when /etc/default/qemu-guest-agent exists;
	// DefaultsArgs is its DAEMON_ARGS.
	DefaultsFound bool
	DefaultsArgs  string
	// Settings is what the agent runs with; SettingsFrom says from what
	// (its process, its unit, or defaults).
	Settings     Settings
	SettingsFrom string
	// OtherConfs are the configuration files of the other build
	// (/etc/qemu or /etc/qemu-kvm) that exist.
	OtherConfs []string
	// Marker is the frozen marker in Settings.StateDir.
	Marker marker
	// Hook is the stat of Settings.Hook when the hook is enabled.
	Hook    fs.Entry
	HookErr error
	// HookScripts is the hook directory's listing when the hook is
	// enabled; Stranded are the runnable scripts in the usual hook
	// directories when it is not.
	HookScripts []script
	Stranded    []string
	// SELinux is whether it enforces, and what it denied.
	SELinux selinux
	// ProbeDeclared is true when the config has a probe: section, at
	// ProbeWhere.
	ProbeDeclared bool
	ProbeWhere    string
	// Display renders a guest path for the report; nil shows it as it is.
	Display func(string) string
}

// marker is the frozen marker as found.
type marker struct {
	Path  string
	Mtime time.Time
	Err   error // nil when it exists
}

// selinux is the SELinux state the agent runs under.
type selinux struct {
	Enforcing bool
	From      string // the file that said so, "" without SELinux
	// AVCs are the audit log's denials (all of them: the judge picks the
	// agent's recent ones).
	AVCs []auditlog.AVC
	// UnconfinedOff is true when virt_qemu_ga_run_unconfined is off.
	UnconfinedOff bool
}

func (f Facts) show(p string) string {
	if f.Display == nil {
		return p
	}
	return f.Display(p)
}

// Gather reads what the check judges. It stops early, with Interrupted
// set, when ctx ends after the unit was asked for.
func Gather(ctx context.Context, env *runner.Env) Facts {
	root := env.Root
	f := Facts{Live: env.Live, IsRoot: env.IsRoot, Pres: Probe(env), Display: root.Display, HasSystemd: env.Systemd != nil}
	if env.Now != nil {
		f.Now = env.Now()
	}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
	}
	if env.Config != nil && env.Config.Probe.Declared {
		f.ProbeDeclared, f.ProbeWhere = true, env.Config.Probe.Where(-1)
	}
	f.Version, f.VersionFrom, f.Confdir = readVersion(root, f.Pres.Binary)
	f.Unit = readUnit(root)
	if env.Live {
		f.Missing = waitsForMissing(root, f.Unit)
		if f.HasSystemd {
			f.Units, f.UnitsErr = env.Systemd.Units(ctx, UnitName)
			if len(f.Units) > 0 && (f.Units[0].UnitFileState == "disabled" || f.Units[0].ActiveState != "active") {
				f.UdevRule = udevRule(root)
			}
		}
	}
	if ctx.Err() != nil {
		f.Interrupted = true
		return f
	}
	if b, err := root.ReadFile("/etc/default/qemu-guest-agent"); err == nil {
		vars, _ := envfile.Parse("/etc/default/qemu-guest-agent", b, envfile.Shell)
		f.DefaultsFound, f.DefaultsArgs = true, vars["DAEMON_ARGS"].Value
	}
	f.Settings, f.SettingsFrom = resolve(root, f)
	for _, other := range []string{"/etc/qemu/qemu-ga.conf", "/etc/qemu-kvm/qemu-ga.conf"} {
		if root.Exists(other) {
			f.OtherConfs = append(f.OtherConfs, other)
		}
	}
	f.Marker = readMarker(root, f.Settings.StateDir)
	gatherHooks(root, &f)
	f.SELinux = readSELinux(root, env.Live)
	return f
}

// readVersion reads qemu-ga's version and compiled-in configuration
// directory from the binary's own strings, which works on image roots and
// needs no subprocess; dpkg's status file is the fallback.
func readVersion(root *fs.Root, binary string) (v Version, from, confdir string) {
	if binary != "" {
		if data, err := root.ReadFile(binary); err == nil {
			if m := versionRE().FindSubmatch(data); m != nil {
				v, _ = ParseVersion(string(m[1]))
				from = root.Display(binary)
			}
			if d, ok := findConfdir(data); ok {
				confdir = d
			}
		}
	}
	if !v.Known {
		if b, err := root.ReadFile(dpkgstatus.Path); err == nil {
			// Problems in other stanzas do not hide this one.
			pkgs, _ := dpkgstatus.Parse(b)
			for _, p := range dpkgstatus.Find(pkgs, "qemu-guest-agent") {
				if p.Installed() {
					v, _ = ParseVersion(p.Upstream())
					from = dpkgstatus.Path
					break
				}
			}
		}
	}
	if !v.Known {
		from = "unknown: the newest agent behaviour is assumed"
	}
	if confdir == "" {
		confdir = "/etc/qemu"
		// RHEL and its rebuilds package the agent as qemu-kvm's and read
		// /etc/qemu-kvm; a release that says it is like one does too.
		if rel := readOSRelease(root); rel.Like("rhel") || rel.Like("fedora") || rel.Like("centos") {
			confdir = "/etc/qemu-kvm"
		}
	}
	return v, from, confdir
}

// readOSRelease reads os-release(5) from its first path that exists; a
// missing or bad file gives what parsed, which may be nothing.
func readOSRelease(root *fs.Root) osrelease.Release {
	for _, p := range osrelease.Paths {
		if b, err := root.ReadFile(p); err == nil {
			rel, _ := osrelease.Parse(b)
			return rel
		}
	}
	return osrelease.Release{}
}

// waitsForMissing lists the device units qemu-guest-agent.service cannot
// run without (Unit.WaitsFor) whose device node does not exist.
func waitsForMissing(root *fs.Root, ui *unitInfo) []string {
	if ui == nil {
		return nil
	}
	var out []string
	for _, n := range ui.unit.WaitsFor() {
		p, ok := DevicePath(n)
		if !ok {
			continue
		}
		if _, err := root.Lstat(p); errors.Is(err, iofs.ErrNotExist) {
			out = append(out, n+" ("+p+")")
		}
	}
	return out
}

// udevRule returns the udev rule file that pulls the unit in when the
// port appears, which is how Debian and Ubuntu start the agent (their
// unit has no [Install] section, so "enabled" means nothing there); ""
// when none does.
func udevRule(root *fs.Root) string {
	for _, d := range []string{"/etc/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d"} {
		ents, _ := root.ReadDir(d)
		for _, e := range ents {
			b, err := root.ReadFile(d + "/" + e.Name)
			if err == nil && strings.Contains(string(b), "SYSTEMD_WANTS") && strings.Contains(string(b), UnitName) {
				return d + "/" + e.Name
			}
		}
	}
	return ""
}

// readMarker looks for qga.state.isfrozen in the agent's state directory.
func readMarker(root *fs.Root, dir string) marker {
	m := marker{Path: path.Join(dir, FrozenMarker)}
	st, err := root.Stat(m.Path)
	m.Mtime, m.Err = st.Mtime, err
	return m
}

// gatherHooks lists the freeze hook and its scripts: the hook's own
// directory when it is enabled, the usual directories when it is not
// (scripts stranded there never run).
func gatherHooks(root *fs.Root, f *Facts) {
	s := f.Settings
	if !s.HookEnabled {
		for _, dir := range dedupe([]string{path.Join(f.Confdir, "fsfreeze-hook.d"), "/etc/qemu/fsfreeze-hook.d", "/etc/qemu-ga/fsfreeze-hook.d", "/etc/qemu-kvm/fsfreeze-hook.d"}) {
			for _, sc := range listScripts(root, dir) {
				if sc.runnable {
					f.Stranded = append(f.Stranded, path.Join(dir, sc.name))
				}
			}
		}
		return
	}
	f.Hook, f.HookErr = root.Stat(s.Hook)
	f.HookScripts = listScripts(root, hookDir(s.Hook))
}

// hookDir is the directory of scripts qemu-ga's sample hook runs.
func hookDir(hook string) string { return path.Join(path.Dir(hook), "fsfreeze-hook.d") }

// script is one entry of a hook directory.
type script struct {
	name     string
	runnable bool
	why      string
}

func listScripts(root *fs.Root, dir string) []script {
	ents, err := root.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []script
	for _, e := range ents {
		sc := script{name: e.Name}
		st, err := root.Stat(dir + "/" + e.Name)
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

// readSELinux reads whether SELinux enforces (the kernel's word on the
// running system, the config file on an image) and, when it does, the
// audit log and the boolean that confines hook scripts.
func readSELinux(root *fs.Root, live bool) selinux {
	var s selinux
	if live {
		if b, err := root.ReadFile("/sys/fs/selinux/enforce"); err == nil {
			s.Enforcing, s.From = strings.TrimSpace(string(b)) == "1", "/sys/fs/selinux/enforce"
		}
	} else if b, err := root.ReadFile("/etc/selinux/config"); err == nil {
		s.Enforcing, s.From = selinuxconfig.Parse(b).Mode == "enforcing", "/etc/selinux/config"
	}
	if !s.Enforcing {
		return s
	}
	if b, err := root.ReadFile("/var/log/audit/audit.log"); err == nil {
		// A denial read in part still counts; the lines it could not read
		// are the log's business, not the agent's.
		s.AVCs, _ = auditlog.Parse(b)
	}
	b, err := root.ReadFile("/sys/fs/selinux/booleans/virt_qemu_ga_run_unconfined")
	s.UnconfinedOff = err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "0")
	return s
}
