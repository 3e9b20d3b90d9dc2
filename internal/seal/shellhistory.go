package seal

import (
	"context"
	"path"
)

var opShellHistory = Operation{
	ID:      "shell-history",
	Default: true,
	Summary: "remove shell and tool histories (.bash_history, .zsh_history, ...) in every home in /etc/passwd",
	Kept:    keptMany("shell histories"),
	Doc: Doc{
		What: "removes `.bash_history`, `.zsh_history`, `.sh_history`, `.ash_history`, `.history`, " +
			"`.python_history`, `.mysql_history`, `.psql_history`, `.sqlite_history`, `.lesshst`, " +
			"`.wget-hsts`, `.viminfo`, `.local/share/fish/fish_history` in `/root` and **every home " +
			"in `/etc/passwd`** (not only `/home/*`). Regular files only: a history linked to " +
			"`/dev/null` is a setting",
		Why: "commands typed on the template, passwords on command lines included",
	},
	Plan: planShellHistory,
}

// historyFiles hold what was typed on the template. Only regular files
// are removed: a history linked to /dev/null is a deliberate setting.
var historyFiles = []string{
	".bash_history", ".zsh_history", ".sh_history", ".ash_history", ".history",
	".python_history", ".mysql_history", ".psql_history", ".sqlite_history",
	".lesshst", ".wget-hsts", ".viminfo", ".local/share/fish/fish_history",
}

func planShellHistory(ctx context.Context, p *Planner) ([]Action, error) {
	homes, err := p.homes()
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, h := range homes {
		for _, f := range historyFiles {
			acts, err := p.removePath(path.Join(h, f), regular, "commands typed on the template, passwords on command lines included")
			if err != nil {
				return nil, err
			}
			out = append(out, acts...)
		}
	}
	return out, nil
}
