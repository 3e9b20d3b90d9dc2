package seal

import (
	"context"
	"path"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
)

var opMachineIDCredential = Operation{
	ID:      "machine-id-credential",
	Default: true,
	Summary: "remove a system.machine_id credential from /etc/credstore, /etc/credstore.encrypted and /usr/lib/credstore*",
	Kept:    keptOne("a machine ID credential"),
	Doc: Doc{
		What: "removes `system.machine_id` (a regular file or a link) from `/etc/credstore`, " +
			"`/etc/credstore.encrypted`, `/usr/local/lib/credstore*` and `/usr/lib/credstore*`",
		Why: "a credential of that name sets the machine ID at boot",
	},
	Plan: planMachineIDCredential,
}

const credentialReason = "a system.machine_id credential sets the machine ID at boot: every clone would share it"

func planMachineIDCredential(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	for _, cred := range identity.MachineIDCredentialPaths {
		d := path.Dir(cred)
		e, ok, err := p.lstat(d)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if e.Kind != fs.KindDir {
			p.Note(d, "is a %s, not a directory", kindNoun(e.Kind))
			continue
		}
		acts, err := p.removePath(cred, regularLink, credentialReason)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}
