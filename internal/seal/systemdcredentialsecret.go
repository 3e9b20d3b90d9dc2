package seal

import (
	"context"
	"fmt"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

var opSystemdCredentialSecret = Operation{
	ID:      "systemd-credential-secret",
	Default: true,
	Summary: "remove /var/lib/systemd/credential.secret (refused while encrypted credentials depend on it)",
	Kept:    keptOne("systemd's credential secret"),
	Doc: Doc{
		What: "removes `/var/lib/systemd/credential.secret` (refused while encrypted credentials depend " +
			"on it)",
		Why: "clones must not decrypt each other's credentials",
	},
	Plan: planCredentialSecret,
}

func planCredentialSecret(ctx context.Context, p *Planner) ([]Action, error) {
	secret := catalogue.Lookup(catalogue.CredentialSecret).Files()[0]
	acts, err := p.removePath(secret, regular, "the host key for systemd-creds: clones must not decrypt each other's credentials")
	if err != nil || len(acts) == 0 {
		return acts, err
	}
	for _, d := range []string{"/etc/credstore.encrypted", "/usr/lib/credstore.encrypted"} {
		ents, err := p.Root.ReadDir(d)
		if err == nil && len(ents) > 0 {
			if !p.RefuseFix(secret, true, fmt.Sprintf("the credentials in %s (%s) are encrypted with it: lost without it", d, count(len(ents), "file")),
				"re-encrypt them with the TPM, or drop the operation (--ops -systemd-credential-secret), or --force") {
				return nil, nil
			}
		}
	}
	return acts, nil
}
