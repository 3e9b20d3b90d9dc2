package seal

import "context"

var opPasswdBackups = Operation{
	ID:      "passwd-backups",
	Default: true,
	Summary: "remove /etc/{passwd,shadow,group,gshadow,subuid,subgid}- backups",
	Kept:    keptMany("password file backups"),
	Doc: Doc{
		What: "removes `/etc/{passwd,shadow,group,gshadow,subuid,subgid}-`",
		Why:  "old password hashes and removed accounts",
	},
	Plan: planPasswdBackups,
}

func planPasswdBackups(ctx context.Context, p *Planner) ([]Action, error) {
	var names []string
	for _, f := range []string{"passwd", "shadow", "group", "gshadow", "subuid", "subgid"} {
		names = append(names, "/etc/"+f+"-")
	}
	return p.removePaths(names, regular, "previous account databases: old password hashes and removed accounts")
}
