package seal

import "context"

var opCloudInitSeed = Operation{
	ID:      "cloud-init-seed",
	Summary: "remove /var/lib/cloud/seed, the local NoCloud seed (cloud-init clean --seed) (opt-in)",
	Doc: Doc{
		What: "removes `/var/lib/cloud/seed` (`cloud-init clean --seed`)",
		Why:  "a baked-in NoCloud seed may be intended",
	},
	Plan: planCloudInitSeed,
}

func planCloudInitSeed(ctx context.Context, p *Planner) ([]Action, error) {
	return p.removePath("/var/lib/cloud/seed", stateTree,
		"a baked-in seed makes every clone provision from the template's meta-data and user-data")
}
