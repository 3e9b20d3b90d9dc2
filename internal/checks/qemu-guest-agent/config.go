package qemuguestagent

import (
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/agent"
)

// Defaults of a Linux qemu-ga build (qga/main.c).
const (
	DefaultVirtioPath = agent.DefaultVirtioPath
	DefaultSerialPath = "/dev/ttyS0"
	DefaultStateDir   = "/var/run"
	// PortName is the virtio-serial port name the hypervisor gives the channel.
	PortName = agent.PortName
	// FrozenMarker is created in the state directory on freeze and removed
	// on thaw; an agent that starts and finds it refuses most commands.
	FrozenMarker = "qga.state.isfrozen"
)

// Settings is the configuration a qemu-ga process runs with, merged from
// its configuration file and command line the way config_load and
// config_parse do, with where each value came from.
type Settings struct {
	Version  Version
	Method   string
	Path     string
	StateDir string
	// HookEnabled is true when -F or fsfreeze-hook= was given; Hook is
	// then the script it runs on freeze and thaw.
	HookEnabled bool
	Hook        string
	Block       []string
	Allow       []string
	AllowSet    bool
	// Origin maps a setting name (method, path, statedir, fsfreeze-hook,
	// block-rpcs, allow-rpcs) to where its value came from.
	Origin map[string]string
	// Fatal lists reasons this configuration makes qemu-ga exit at start.
	Fatal []string
	// Notes are facts worth showing (a deprecated key that won, options
	// whose effect is not modelled).
	Notes []string
}

// Filter computes the effective RPC filter of s.
func (s Settings) Filter() Filter { return ComputeFilter(s.Version, s.Block, s.Allow, s.AllowSet) }

// Merge applies configuration file kf (nil when absent; named confName in
// Origin) and then command line a, for an agent of version v whose
// compiled-in configuration directory is confdir. Scalars: the command
// line wins. Lists: the file's and the command line's accumulate.
func Merge(v Version, confdir string, kf *KeyFile, confName string, a Args) Settings {
	s := Settings{Version: v, Method: "virtio-serial", StateDir: DefaultStateDir, Origin: map[string]string{}}
	fromFile := func(key string) (string, bool) {
		if kf == nil || !kf.Has("general", key) {
			return "", false
		}
		val, err := kf.String("general", key)
		if err != nil {
			s.Fatal = append(s.Fatal, fmt.Sprintf("%s: %v", confName, err))
			return "", false
		}
		s.Origin[key] = confName
		return val, true
	}
	if x, ok := fromFile("method"); ok {
		s.Method = x
	}
	if x, ok := fromFile("path"); ok {
		s.Path = x
	}
	if x, ok := fromFile("statedir"); ok {
		s.StateDir = x
	}
	if x, ok := fromFile("fsfreeze-hook"); ok {
		s.HookEnabled, s.Hook = true, x
	}
	// Which key holds the block-list depends on the version: "blacklist"
	// only before 7.2; from 7.2 to 9.0 "blacklist" replaces "block-rpcs"
	// when both exist; from 9.1 "blacklist" is ignored.
	blockKey := "block-rpcs"
	switch {
	case v.Known && !v.AtLeast(7, 2):
		blockKey = "blacklist"
	case v.Known && !v.AtLeast(9, 1) && kf != nil && kf.Has("general", "blacklist"):
		blockKey = "blacklist"
		if kf.Has("general", "block-rpcs") {
			s.Notes = append(s.Notes, confName+": the deprecated blacklist key replaces block-rpcs in this version; block-rpcs is ignored")
		}
	case kf != nil && kf.Has("general", "blacklist") && v.AtLeast(9, 1):
		s.Notes = append(s.Notes, confName+": the blacklist key is ignored since qemu-ga 9.1")
	}
	fileBlock, fileAllow := false, false
	if x, ok := fromFile(blockKey); ok {
		s.Block = append(s.Block, splitList(x)...)
		s.Origin["block-rpcs"] = confName + " (" + blockKey + ")"
		fileBlock = true
	}
	if v.AtLeast(8, 1) {
		if x, ok := fromFile("allow-rpcs"); ok {
			s.Allow = append(s.Allow, splitList(x)...)
			s.AllowSet = true
			fileAllow = true
		}
	} else if kf != nil && kf.Has("general", "allow-rpcs") {
		s.Notes = append(s.Notes, confName+": allow-rpcs is ignored before qemu-ga 8.1")
	}
	if fileBlock && fileAllow && !v.AtLeast(9, 1) {
		s.Fatal = append(s.Fatal, confName+": qemu-ga before 9.1 refuses block-rpcs and allow-rpcs together")
	}
	s.applyArgs(confdir, a)
	return s
}

// applyArgs applies the command line over the file's settings: scalars
// replace, lists accumulate.
func (s *Settings) applyArgs(confdir string, a Args) {
	if a.BlockGiven && a.AllowGiven && !s.Version.AtLeast(9, 1) {
		s.Fatal = append(s.Fatal, "command line: qemu-ga before 9.1 refuses --block-rpcs and --allow-rpcs together")
	}
	if a.Method != "" {
		s.Method, s.Origin["method"] = a.Method, "command line"
	}
	if a.Path != "" {
		s.Path, s.Origin["path"] = a.Path, "command line"
	}
	if a.StateDir != "" {
		s.StateDir, s.Origin["statedir"] = a.StateDir, "command line"
	}
	if a.HookSet {
		s.HookEnabled, s.Hook, s.Origin["fsfreeze-hook"] = true, a.Hook, "command line (-F)"
	}
	if a.BlockGiven {
		s.Block = append(s.Block, a.Block...)
		s.Origin["block-rpcs"] = joinOrigin(s.Origin["block-rpcs"], "command line")
	}
	if a.AllowGiven {
		s.Allow = append(s.Allow, a.Allow...)
		s.AllowSet = true
		s.Origin["allow-rpcs"] = joinOrigin(s.Origin["allow-rpcs"], "command line")
	}
	if s.HookEnabled && s.Hook == "" && s.Origin["fsfreeze-hook"] == "command line (-F)" {
		s.Hook = path.Join(confdir, "fsfreeze-hook")
	}
	if s.Path == "" {
		switch s.Method {
		case "virtio-serial":
			s.Path = DefaultVirtioPath
		case "isa-serial":
			s.Path = DefaultSerialPath
		}
	}
	for _, u := range a.Unmodelled {
		s.Notes = append(s.Notes, "option "+u+" changes the filter in ways guestcheck does not model")
	}
}

func joinOrigin(a, b string) string {
	if a == "" {
		return b
	}
	return a + " + " + b
}

// dedupe keeps the first of each non-empty name, for display.
func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ",")
}
