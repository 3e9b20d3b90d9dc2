package seal

import (
	"context"
	"path"
)

var opAuthorizedKeys = Operation{
	ID:      "authorized-keys",
	Summary: "remove ~/.ssh/authorized_keys{,2} of root and every home in /etc/passwd (opt-in: lock-out risk)",
	Doc: Doc{
		What: "removes `~/.ssh/authorized_keys` and `authorized_keys2` of root and every home in " +
			"`/etc/passwd`",
		Why: "may lock everyone out of the clones",
	},
	Plan: planAuthorizedKeys,
}

func planAuthorizedKeys(ctx context.Context, p *Planner) ([]Action, error) {
	homes, err := p.homes()
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, h := range homes {
		for _, f := range []string{".ssh/authorized_keys", ".ssh/authorized_keys2"} {
			acts, err := p.removePath(path.Join(h, f), regular,
				"keys that let the template's administrators into every clone; cloud-init injects the clone's own")
			if err != nil {
				return nil, err
			}
			out = append(out, acts...)
		}
	}
	return out, nil
}
