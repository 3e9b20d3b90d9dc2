package cloudinit

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/procs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
)

// maxHops bounds the walk up the process tree: real chains are a handful
// of processes deep, and a corrupt or hostile /proc must not loop us.
const maxHops = 64

// Inside reports whether this process runs under cloud-init: whether an
// ancestor (following the parent pids of the run's process table,
// procs.List on s, from /proc/self up to PID 1) is cloud-init itself
// ("cloud-init modules --mode=final", "cloud-init --all-stages", python
// running it) or a script cloud-init runs
// (/var/lib/cloud/instance/scripts/runcmd, per-boot/per-instance/per-once
// scripts). The string describes what was found, e.g.
// "/var/lib/cloud/instance/scripts/runcmd (pid 912) under cloud-init
// modules --mode=final (pid 640)". Everything is read through root, so a
// fake /proc works in tests; an unreadable /proc answers false.
func Inside(s *store.Store, root *fs.Root) (bool, string) {
	return insideOf(ancestors(procs.List(context.Background(), s, root)))
}

// ancestor is one process above this one, as /proc shows it.
type ancestor struct {
	pid  int
	comm string
	args []string // nil when the cmdline is hidden or empty
}

// ancestors is the chain of parents from t's Self up to (not including)
// PID 1. It stops at a process the table does not hold (it went away, or
// /proc hides it), at a loop, and after maxHops.
func ancestors(t *procs.Table) []ancestor {
	if t.Self.PID == 0 {
		return nil
	}
	var out []ancestor
	seen := map[int]bool{t.Self.PID: true}
	pid := t.Self.PPID
	for hop := 0; hop < maxHops && pid > 1 && !seen[pid]; hop++ {
		seen[pid] = true
		p, ok := t.Find(pid)
		if !ok || p.Comm == "" && p.PPID == 0 {
			break // gone, hidden, or its stat did not parse
		}
		out = append(out, ancestor{pid: pid, comm: p.Comm, args: p.Argv})
		pid = p.PPID
	}
	return out
}

// insideOf finds cloud-init among the ancestors, nearest first, and the
// scripts it runs on the way there.
func insideOf(chain []ancestor) (bool, string) {
	var found []string
	for _, a := range chain {
		if what, isCI := classify(a.args, a.comm); what != "" {
			found = append(found, fmt.Sprintf("%s (pid %d)", what, a.pid))
			if isCI {
				break // cloud-init's own ancestors (systemd) add nothing
			}
		}
	}
	if len(found) == 0 {
		return false, ""
	}
	return true, strings.Join(found, " under ")
}

// classify names a process that belongs to cloud-init. isCloudInit is true
// for cloud-init's own process, false for a script it runs.
func classify(args []string, comm string) (what string, isCloudInit bool) {
	// The program is among the first arguments: "cloud-init ...",
	// "/usr/bin/python3 /usr/bin/cloud-init ...", "python3 -I ...".
	for i, a := range args {
		if i >= 4 {
			break
		}
		if path.Base(a) == "cloud-init" || a == "cloudinit.cmd.main" {
			return clip(strings.Join(append([]string{"cloud-init"}, args[i+1:]...), " "), 120), true
		}
		if isCloudScript(a) {
			return clip(a, 120), false
		}
	}
	if len(args) == 0 && comm == "cloud-init" {
		// cmdline hidden (hidepid) or empty: comm is all there is.
		return "cloud-init", true
	}
	return "", false
}

// isCloudScript reports whether p is a script cloud-init executes.
func isCloudScript(p string) bool {
	p = path.Clean(p)
	switch {
	case strings.HasPrefix(p, "/var/lib/cloud/instance/scripts/"),
		strings.HasPrefix(p, "/var/lib/cloud/scripts/per-boot/"),
		strings.HasPrefix(p, "/var/lib/cloud/scripts/per-instance/"),
		strings.HasPrefix(p, "/var/lib/cloud/scripts/per-once/"):
		return true
	case strings.HasPrefix(p, identity.CloudInstancesDir+"/"):
		return strings.Contains(p, "/scripts/")
	}
	return false
}

// clip shortens s for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
