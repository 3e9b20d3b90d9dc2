package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opResolvConf = Operation{
	ID:      "resolv-conf",
	Summary: "remove /etc/resolv.conf when it is a regular file; a symlink (resolved's stub) is kept (opt-in)",
	Doc: Doc{
		What: "removes `/etc/resolv.conf` only when it is a regular file; a symlink (systemd-resolved's " +
			"stub, resolvconf) is kept",
		Why: "a static resolver may be intended; deleting the link breaks DNS",
	},
	Plan: planResolvConf,
}

func planResolvConf(ctx context.Context, p *Planner) ([]Action, error) {
	const f = "/etc/resolv.conf"
	e, ok, err := p.lstat(f)
	if err != nil || !ok {
		return nil, err
	}
	if e.Kind == fs.KindSymlink {
		// Deleting resolved's stub link is what broke DNS after waagent.
		p.Note(f, "kept: a symlink managed by the resolver stack")
		return nil, nil
	}
	return p.removeEntry(f, e, regular, "the template's DNS servers and search domains; DHCP writes the clone's")
}
