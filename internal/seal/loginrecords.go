package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opLoginRecords = Operation{
	ID:      "login-records",
	Default: true,
	Summary: "empty wtmp, btmp, lastlog, faillog, tallylog in place; remove rotated copies, wtmpdb/lastlog2 and offline utmp",
	Kept:    keptMany("login records"),
	Doc: Doc{
		What: "truncates `/var/log/{wtmp,btmp,lastlog,faillog,tallylog}` in place (owner `root:utmp` " +
			"and mode stay); removes rotated `wtmp.*`/`btmp.*`, wtmpdb `/var/lib/wtmpdb/wtmp.db` and " +
			"`/var/lib/lastlog/lastlog2.db`; offline also `/var/run/utmp`",
		Why: "who logged in to the template, and when",
	},
	Plan: planLoginRecords,
}

// loginRecordFiles are binary login records: truncated, never parsed, so
// their owner and mode (btmp is 0660 root:utmp) stay.
var loginRecordFiles = []string{"wtmp", "btmp", "lastlog", "faillog", "tallylog"}

const loginReason = "records of who logged in to the template, and when"

func planLoginRecords(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	for _, f := range loginRecordFiles {
		acts, err := p.truncatePath("/var/log/"+f, -1, loginReason)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	acts, err := p.removeChildren("/var/log", func(e fs.Entry) bool {
		return strings.HasPrefix(e.Name, "wtmp.") || strings.HasPrefix(e.Name, "btmp.") ||
			strings.HasPrefix(e.Name, "wtmp-") || strings.HasPrefix(e.Name, "btmp-")
	}, regular, loginReason)
	if err != nil {
		return nil, err
	}
	out = append(out, acts...)
	// SQLite successors of wtmp and lastlog (wtmpdb, lastlog2): removed,
	// not truncated; both recreate their database.
	acts, err = p.removePaths([]string{"/var/lib/wtmpdb/wtmp.db", "/var/lib/lastlog/lastlog2.db"}, regular, loginReason)
	if err != nil {
		return nil, err
	}
	out = append(out, acts...)
	if !p.Opts.Live {
		// On a running system utmp lists the current sessions and lives
		// on a tmpfs that the next boot discards anyway.
		acts, err = p.removePath("/var/run/utmp", regular, "sessions open in the template")
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}

// isLoginRecord reports whether a /var/log entry belongs to login-records.
func isLoginRecord(name string) bool {
	for _, f := range loginRecordFiles {
		if name == f || strings.HasPrefix(name, f+".") || strings.HasPrefix(name, f+"-") {
			return true
		}
	}
	return false
}
