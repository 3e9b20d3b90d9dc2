package seal

import "context"

var opMailSpool = Operation{
	ID:      "mail-spool",
	Summary: "remove local mailboxes in /var/spool/mail and /var/mail (opt-in)",
	Doc: Doc{
		What: "removes local mailboxes in `/var/spool/mail` and `/var/mail`",
		Why:  "may hold wanted mail",
	},
	Plan: planMailSpool,
}

func planMailSpool(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	// /var/mail is usually a symlink to spool/mail: readDir does not follow
	// it, so each mailbox is planned once.
	for _, d := range []string{"/var/spool/mail", "/var/mail"} {
		acts, err := p.removeChildren(d, nil, regular, "mail delivered to the template's users (cron output included)")
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}
