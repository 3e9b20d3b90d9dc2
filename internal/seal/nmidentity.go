package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

var opNMIdentity = Operation{
	ID:      "nm-identity",
	Default: true,
	Summary: "remove NetworkManager's secret_key (stable-privacy IPv6, stable MACs), timestamps and seen-bssids",
	Kept:    keptOne("NetworkManager's secret key and identity"),
	Doc: Doc{
		What: "removes `/var/lib/NetworkManager/secret_key`, `timestamps`, `seen-bssids`",
		Why: "the secret key derives stable-privacy IPv6 addresses and stable MACs: clones would " +
			"collide",
	},
	Plan: planNMIdentity,
}

func planNMIdentity(ctx context.Context, p *Planner) ([]Action, error) {
	acts, err := p.removePaths(catalogue.Lookup(catalogue.NMSecretKey).Files(), regular,
		"the per-host key behind stable-privacy IPv6 addresses and stable MACs: clones would share link-local addresses and fail DAD")
	if err != nil {
		return nil, err
	}
	more, err := p.removePaths(catalogue.Lookup(catalogue.NMHistory).Files(), regular,
		"the template's connection history")
	return append(acts, more...), err
}
