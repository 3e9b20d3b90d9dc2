package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opTmp = Operation{
	ID:      "tmp",
	Default: true,
	Summary: "remove the contents of /tmp and /var/tmp (device nodes are reported, not removed)",
	Kept:    keptMany("the contents of /tmp and /var/tmp"),
	Doc: Doc{
		What: "removes the contents of `/tmp` and `/var/tmp` (files, directories, links, FIFOs, " +
			"sockets; device nodes are reported, never removed). Live without `--poweroff`: keeps " +
			"`systemd-private-*` and the X11/ICE socket directories",
		Why: "temporary files of the template's sessions and builds",
	},
	Plan: planTmp,
}

// liveTmpKeep are entries that running services own on a live system;
// the next boot recreates them anyway. They are kept only while those
// services go on running: with --poweroff nothing runs after the apply, and
// an offline verify of the image would otherwise find them.
var liveTmpKeep = []string{".X11-unix", ".ICE-unix", ".XIM-unix", ".font-unix", ".Test-unix"}

func planTmp(ctx context.Context, p *Planner) ([]Action, error) {
	// remove reports whether entry e of /tmp or /var/tmp is planned for removal.
	remove := func(e fs.Entry) bool {
		if !p.Opts.Live || p.Opts.PowerOff {
			return true
		}
		if strings.HasPrefix(e.Name, "systemd-private-") {
			return false
		}
		for _, k := range liveTmpKeep {
			if e.Name == k {
				return false
			}
		}
		return true
	}
	var out []Action
	for _, d := range []string{"/tmp", "/var/tmp"} {
		acts, err := p.removeChildren(d, remove, anyTree, "temporary files of the template's sessions and builds")
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}
