// Package qemuguestagent inspects qemu-guest-agent the way a KubeVirt,
// Harvester or OpenStack snapshot depends on it: the virtio channel, the
// installed agent and its unit and process, the RPC filter it will apply
// (computed from the same command line, configuration file and environment
// files the agent reads), a leftover frozen marker, fsfreeze hooks and
// SELinux. The parsers of the agent's own formats are pure functions
// over bytes here (the audit log's SELinux denials are
// internal/parse/auditlog's); Gather reads what they need into Facts and Judge, a pure function, turns the Facts into
// findings (Run is the two). The agent's presence (internal/fact/agent) is
// read once per run and shared with the fs-freeze check
// (internal/checks/fs-freeze, package fsfreeze).
package qemuguestagent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Version is an upstream qemu-ga version. The zero value is "unknown",
// which the filter model treats as the newest behaviour it knows.
type Version struct {
	Major, Minor, Micro int
	Known               bool
}

// ParseVersion reads "7.2.22", "8.2.0", "9.1" (with anything after the
// numbers ignored, e.g. "7.2.22 (Debian ...)").
func ParseVersion(s string) (Version, bool) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && (s[end] == '.' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	parts := strings.Split(strings.Trim(s[:end], "."), ".")
	if len(parts) < 2 {
		return Version{}, false
	}
	var n [3]int
	for i := 0; i < len(parts) && i < 3; i++ {
		x, err := strconv.Atoi(parts[i])
		if err != nil {
			return Version{}, false
		}
		n[i] = x
	}
	return Version{Major: n[0], Minor: n[1], Micro: n[2], Known: true}, true
}

func (v Version) String() string {
	if !v.Known {
		return "unknown"
	}
	return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Micro)
}

// AtLeast reports whether v is maj.min or newer; an unknown version is
// treated as the newest.
func (v Version) AtLeast(maj, min int) bool {
	if !v.Known {
		return true
	}
	return v.Major > maj || (v.Major == maj && v.Minor >= min)
}

// command is one RPC of qemu-ga with the release that introduced it
// ("Since:" in qga/qapi-schema.json).
type command struct {
	name       string
	maj, min   int
	linuxNever bool // registered but disabled on Linux by ga_command_init_blockedrpcs
}

// commands is qemu-ga's command table. Evaluating an allow-list needs the
// full list: everything not named is disabled. The order is the
// registration order guest-info reports for 7.2 (tests compare the set).
var commands = []command{
	{name: "guest-sync-delimited", maj: 1, min: 1},
	{name: "guest-sync", maj: 0, min: 15},
	{name: "guest-ping", maj: 0, min: 15},
	{name: "guest-get-time", maj: 1, min: 5},
	{name: "guest-set-time", maj: 1, min: 5},
	{name: "guest-info", maj: 0, min: 15},
	{name: "guest-shutdown", maj: 0, min: 15},
	{name: "guest-file-open", maj: 0, min: 15},
	{name: "guest-file-close", maj: 0, min: 15},
	{name: "guest-file-read", maj: 0, min: 15},
	{name: "guest-file-write", maj: 0, min: 15},
	{name: "guest-file-seek", maj: 0, min: 15},
	{name: "guest-file-flush", maj: 0, min: 15},
	{name: "guest-fsfreeze-status", maj: 0, min: 15},
	{name: "guest-fsfreeze-freeze", maj: 0, min: 15},
	{name: "guest-fsfreeze-freeze-list", maj: 2, min: 2},
	{name: "guest-fsfreeze-thaw", maj: 0, min: 15},
	{name: "guest-fstrim", maj: 1, min: 2},
	{name: "guest-suspend-disk", maj: 1, min: 1},
	{name: "guest-suspend-ram", maj: 1, min: 1},
	{name: "guest-suspend-hybrid", maj: 1, min: 1},
	{name: "guest-network-get-interfaces", maj: 1, min: 1},
	{name: "guest-get-vcpus", maj: 1, min: 5},
	{name: "guest-set-vcpus", maj: 1, min: 5},
	{name: "guest-get-disks", maj: 5, min: 2},
	{name: "guest-get-fsinfo", maj: 2, min: 2},
	{name: "guest-set-user-password", maj: 2, min: 3},
	{name: "guest-get-memory-blocks", maj: 2, min: 3},
	{name: "guest-set-memory-blocks", maj: 2, min: 3},
	{name: "guest-get-memory-block-info", maj: 2, min: 3},
	{name: "guest-exec-status", maj: 2, min: 5},
	{name: "guest-exec", maj: 2, min: 5},
	{name: "guest-get-host-name", maj: 2, min: 10},
	{name: "guest-get-users", maj: 2, min: 10},
	{name: "guest-get-timezone", maj: 2, min: 10},
	{name: "guest-get-osinfo", maj: 2, min: 10},
	{name: "guest-get-devices", maj: 5, min: 2, linuxNever: true},
	{name: "guest-ssh-get-authorized-keys", maj: 5, min: 2},
	{name: "guest-ssh-add-authorized-keys", maj: 5, min: 2},
	{name: "guest-ssh-remove-authorized-keys", maj: 5, min: 2},
	{name: "guest-get-diskstats", maj: 7, min: 1},
	{name: "guest-get-cpustats", maj: 7, min: 1},
	{name: "guest-network-get-route", maj: 9, min: 1},
	{name: "guest-get-load", maj: 9, min: 1},
}

// Commands returns the names of the RPCs a Linux qemu-ga of version v
// registers, in table order.
func Commands(v Version) []string {
	var out []string
	for _, c := range commands {
		if v.AtLeast(c.maj, c.min) {
			out = append(out, c.name)
		}
	}
	return out
}

// FreezeRPCs are what a quiesced snapshot needs: virt-launcher freezes
// and thaws through them and reads the mount list with guest-get-fsinfo.
var FreezeRPCs = []string{"guest-fsfreeze-freeze", "guest-fsfreeze-freeze-list", "guest-fsfreeze-thaw",
	"guest-fsfreeze-status", "guest-get-fsinfo"}

// KubeVirtRequiredRPCs are the RPCs virt-handler requires; if any is
// disabled it marks the VMI AgentVersionNotSupported
// (pkg/virt-handler/guestagent.go).
var KubeVirtRequiredRPCs = []string{"guest-ping", "guest-get-time", "guest-info", "guest-shutdown",
	"guest-network-get-interfaces", "guest-get-fsinfo", "guest-get-host-name", "guest-get-users",
	"guest-get-timezone", "guest-get-osinfo"}

// ExecRPCs are what automation (virtctl, Proxmox, Ansible) uses to run
// commands in the guest; RHEL 9.4+ disables them by default.
var ExecRPCs = []string{"guest-exec", "guest-exec-status"}

// Filter is the effective RPC filter of one agent: for every command the
// agent registers, whether it will run.
type Filter struct {
	Version Version
	// Enabled maps every registered command to its state.
	Enabled map[string]bool
	// Unknown lists filter entries that name no command of this version,
	// such as wildcards: qemu-ga compares names with strcmp.
	Unknown []string
	// AllowList is true when an allow-list is in force.
	AllowList bool
}

// ComputeFilter applies qemu-ga's rule (ga_command_is_allowed): with an
// allow-list everything not named is disabled; a name on the block list is
// disabled whatever the allow-list says; commands the Linux build never
// supports are disabled. Names must match exactly; there is no globbing.
func ComputeFilter(v Version, block, allow []string, allowSet bool) Filter {
	f := Filter{Version: v, Enabled: map[string]bool{}, AllowList: allowSet}
	known := map[string]bool{}
	for _, c := range commands {
		if !v.AtLeast(c.maj, c.min) {
			continue
		}
		known[c.name] = true
		on := !c.linuxNever
		if allowSet && !slices.Contains(allow, c.name) {
			on = false
		}
		if slices.Contains(block, c.name) {
			on = false
		}
		f.Enabled[c.name] = on
	}
	seen := map[string]bool{}
	for _, n := range append(append([]string(nil), block...), allow...) {
		if n != "" && !known[n] && !seen[n] {
			seen[n] = true
			f.Unknown = append(f.Unknown, n)
		}
	}
	return f
}

// Disabled returns the disabled commands among names (all commands when
// names is nil), in the order given; names the version lacks count as
// disabled, which is how KubeVirt sees them.
func (f Filter) Disabled(names []string) []string {
	if names == nil {
		names = f.names()
	}
	var out []string
	for _, n := range names {
		if !f.Enabled[n] {
			out = append(out, n)
		}
	}
	return out
}

func (f Filter) names() []string {
	var out []string
	for _, c := range commands {
		if _, ok := f.Enabled[c.name]; ok {
			out = append(out, c.name)
		}
	}
	return out
}

// EnabledNames returns the enabled commands in table order.
func (f Filter) EnabledNames() []string {
	var out []string
	for _, n := range f.names() {
		if f.Enabled[n] {
			out = append(out, n)
		}
	}
	return out
}
