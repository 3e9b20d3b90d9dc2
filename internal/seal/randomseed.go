package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

var opRandomSeed = Operation{
	ID:      "random-seed",
	Default: true,
	Summary: "remove saved random seeds (/var/lib/systemd/random-seed, loader/random-seed on the EFI system partition, ...)",
	Kept:    keptMany("saved random seeds"),
	Doc: Doc{
		What: "removes `/var/lib/systemd/random-seed`, `/var/lib/random-seed`, " +
			"`/var/lib/urandom/random-seed`, `/var/lib/misc/random-seed` and the systemd-boot seed " +
			"`loader/random-seed` on `/boot/efi`, `/efi`, `/boot`. Live: stops " +
			"`systemd-random-seed.service` first",
		Why: "clones sharing a seed start with the same entropy pool",
	},
	Plan: planRandomSeed,
}

func planRandomSeed(ctx context.Context, p *Planner) ([]Action, error) {
	acts, err := p.removePaths(catalogue.Lookup(catalogue.RandomSeed).Files(), regular, "clones sharing one saved seed start their entropy pools identically")
	if err != nil || len(acts) == 0 {
		return acts, err
	}
	// On the running system the unit's ExecStop saves a fresh seed; stop
	// it first so that the seed removed is the last one written.
	if p.Opts.Live && p.Opts.Booted {
		stop := Action{Kind: StopUnit, Target: "systemd-random-seed.service",
			Reason: "its ExecStop= saves a new seed; stopped before the seed is removed"}
		acts = append([]Action{stop}, acts...)
	}
	return acts, nil
}
