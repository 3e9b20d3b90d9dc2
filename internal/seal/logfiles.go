package seal

import (
	"context"
	"path"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opLogfiles = Operation{
	ID:      "logfiles",
	Default: true,
	Summary: "empty logs under /var/log in place, remove rotated ones, and installer logs in /root",
	Kept:    keptMany("log files"),
	Doc: Doc{
		What: "walks `/var/log` (not `journal/`, not the login records, not into other mounts, never " +
			"through symlinks): truncates regular logs in place, removes rotated ones (`.1`, `.gz`, " +
			"`.xz`, `.zst`, `-YYYYMMDD`, `.old`); removes installer leftovers in `/root` " +
			"(`anaconda-ks.cfg`, `original-ks.cfg`, `initial-setup-ks.cfg`, `anaconda-post.log`, " +
			"`install.log*`)",
		Why: "logs name the template's host, addresses and users. In place, so running daemons keep " +
			"writing to their file (a hard-linked log gets a new file instead, see Safety)",
	},
	Plan: planLogfiles,
}

// installerLeftovers are installer logs and kickstarts left in /root.
var installerLeftovers = []string{
	"/root/anaconda-ks.cfg", "/root/original-ks.cfg", "/root/initial-setup-ks.cfg",
	"/root/anaconda-post.log", "/root/install.log", "/root/install.log.syslog",
}

func planLogfiles(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	werr := p.walk("/var/log", func(name string, e fs.Entry) bool {
		// The journal and login records have their own operations: binary
		// files must not be truncated under their writers.
		return (name == "/var/log/journal" && e.Kind == fs.KindDir) || (path.Dir(name) == "/var/log" && isLoginRecord(e.Name))
	}, func(name string, e fs.Entry) {
		switch {
		case e.Kind != fs.KindRegular:
			if e.Kind != fs.KindSymlink {
				p.Note(name, "is a %s", kindNoun(e.Kind))
			}
		case rotatedLog.MatchString(e.Name):
			out = append(out, Action{Kind: Remove, Path: name, Kinds: regular, Reason: "rotated log of the template"})
		default:
			// In place: the daemon's open file, owner and mode stay.
			out = append(out, p.truncateEntry(name, e, -1, "log of the template's life: hostnames, addresses, users")...)
		}
	})
	if werr != nil {
		return nil, werr
	}
	acts, err := p.removePaths(installerLeftovers, regular, "installer log or kickstart: names the installed machine and may hold a password hash")
	if err != nil {
		return nil, err
	}
	return append(out, acts...), nil
}
