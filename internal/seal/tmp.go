package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
)

var opTmp = Operation{
	ID:      "tmp",
	Default: true,
	Summary: "remove the contents of /tmp and /var/tmp (device nodes are reported, not removed)",
	Plan:    planTmp,
}

// liveTmpKeep are entries that running services own on a live system;
// the next boot recreates them anyway.
var liveTmpKeep = []string{".X11-unix", ".ICE-unix", ".XIM-unix", ".font-unix", ".Test-unix"}

func planTmp(ctx context.Context, p *Planner) ([]Action, error) {
	keep := func(e fs.Entry) bool {
		if !p.Opts.Live {
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
		acts, err := p.removeChildren(d, keep, anyTree, "temporary files of the template's sessions and builds")
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}
