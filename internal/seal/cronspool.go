package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

var opCronSpool = Operation{
	ID:      "cron-spool",
	Summary: "remove user crontabs and queued at jobs; spool directories and at's .SEQ stay (opt-in)",
	Doc: Doc{
		What: "removes user crontabs and queued `at` jobs (regular files under `/var/spool/cron`, " +
			"`/var/spool/at*`), keeping the directories and `at`'s `.SEQ`",
		Why: "a template's root crontab is usually intentional",
	},
	Plan: planCronSpool,
}

func planCronSpool(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	visit := func(name string, e fs.Entry) {
		if e.Kind == fs.KindRegular && e.Name != ".SEQ" {
			out = append(out, Action{Kind: Remove, Path: name, Kinds: regular, Reason: "jobs scheduled on the template would run on every clone"})
		}
	}
	for _, d := range []string{"/var/spool/cron", "/var/spool/at", "/var/spool/atjobs", "/var/spool/atspool"} {
		if err := p.walk(d, nil, visit); err != nil {
			return nil, err
		}
	}
	return out, nil
}
