package qemuguestagent

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"sort"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/envfile"
	"github.com/guestcheck/guestcheck/internal/parse/ini"
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
func readUnit(root *fs.Root) *unitInfo {
	ui := &unitInfo{env: map[string]string{}, envFrom: map[string]string{}}
	for _, d := range unitDirs {
		p := d + "/" + UnitName
		if b, err := root.ReadFile(p); err == nil {
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
		ents, _ := root.ReadDir(dir)
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
		if b, err := root.ReadFile(dropins[n]); err == nil {
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
		b, err := root.ReadFile(ef.Path)
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
// it really uses), else from the unit file. It reads the configuration
// file that comes out, and returns the settings with where they came from.
func resolve(root *fs.Root, f Facts) (Settings, string) {
	argv, env, from := agentArgv(f)
	var fatal []string
	if ui := f.Unit; ui != nil && ui.err != nil {
		fatal = append(fatal, "ExecStart of "+ui.files[0]+": "+ui.err.Error())
	}
	var args Args
	if len(argv) > 0 {
		var err error
		args, err = ParseArgs(f.Version, argv[1:])
		if err != nil {
			fatal = append(fatal, "command line: "+err.Error())
		}
	}
	confPath, required := path.Join(f.Confdir, "qemu-ga.conf"), false
	if c, ok := env["QGA_CONF"]; ok && c != "" {
		confPath = c
	}
	if args.Config != "" {
		confPath, required = args.Config, true
	}
	var kf *KeyFile
	b, err := root.ReadFile(confPath)
	switch {
	case err == nil:
		kf, err = LoadKeyFile(confPath, b)
		if err != nil {
			fatal = append(fatal, confPath+": "+err.Error())
			kf = nil
		}
	case errors.Is(err, iofs.ErrNotExist) && !required:
	default:
		fatal = append(fatal, fs.ErrorText(confPath, err))
	}
	s := Merge(f.Version, f.Confdir, kf, confPath, args)
	s.Fatal = append(fatal, s.Fatal...)
	if kf != nil {
		s.Notes = append(s.Notes, "configuration file "+confPath+" applied")
	}
	return s, from
}

// agentArgv picks the command line and environment the agent runs with,
// and says where they came from.
func agentArgv(f Facts) (argv []string, env map[string]string, from string) {
	ui, procs := f.Unit, f.Pres.Procs
	switch {
	case len(procs) > 0:
		return procs[0].Argv, procs[0].Env, fmt.Sprintf("process %d (/proc/%d/cmdline)", procs[0].PID, procs[0].PID)
	case ui != nil && ui.err == nil && ui.unit.ExecStart != "":
		return ui.argv, ui.env, "unit " + strings.Join(ui.files, " + ")
	case f.DefaultsFound && ui == nil:
		// No unit: the init script sources the file.
		return append([]string{f.Pres.Binary}, strings.Fields(f.DefaultsArgs)...), map[string]string{},
			"/etc/default/qemu-guest-agent (DAEMON_ARGS, no systemd unit)"
	}
	return []string{f.Pres.Binary}, map[string]string{}, "defaults (no process and no unit file found)"
}
