package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opJournal = Operation{
	ID:      "journal",
	Default: true,
	Summary: "remove every /var/log/journal/<machine-id>/ directory (journald relinquishes /var first when live)",
	Kept:    keptOne("the template's journal"),
	Doc: Doc{
		What: "removes every directory under `/var/log/journal` (one per machine ID); keeps " +
			"`/var/log/journal`, which keeps persistent journaling on. Live: `journalctl " +
			"--relinquish-var` first",
		Why: "the template's journal would never be vacuumed on clones, and holds its history",
	},
	Plan: planJournal,
}

func planJournal(ctx context.Context, p *Planner) ([]Action, error) {
	// /var/log/journal itself stays: its existence is what turns on
	// persistent journaling (Storage=auto).
	acts, err := p.removeChildren("/var/log/journal", func(e fs.Entry) bool { return e.Kind == fs.KindDir },
		fs.KindsOf(fs.KindRegular, fs.KindDir),
		"journals are kept per machine ID: the template's would never be vacuumed on clones, and hold its history")
	if err != nil || len(acts) == 0 {
		return acts, err
	}
	if p.Opts.Live && p.Opts.Booted {
		acts = append([]Action{{Kind: RelinquishVar, Path: "/var/log/journal",
			Reason: "journald switches to /run/log/journal, so nothing writes into the directories being removed"}}, acts...)
	}
	return acts, nil
}
