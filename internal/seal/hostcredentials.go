package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

var opHostCredentials = Operation{
	ID:      "host-credentials",
	Default: true,
	Summary: "remove per-host enrolment: Kerberos keytab, IPA client, SSSD cache, RHSM/RHN, SUSEConnect, yum/smolt UUIDs",
	Kept:    keptMany("per-host enrolment credentials"),
	Doc: Doc{
		What: "removes `/etc/krb5.keytab`; IPA client files (`/etc/ipa/ca.crt`, `default.conf`, " +
			"`/var/lib/ipa-client/{sysrestore,pki}/*`); `/var/lib/sss/db/*`; RHSM " +
			"`/etc/pki/{consumer,entitlement}/*`; `/etc/sysconfig/rhn/{systemid,osad-auth.conf}`; " +
			"`/var/lib/yum/uuid`; smolt IDs; SUSE registration " +
			"`/etc/zypp/credentials.d/SCCcredentials`, `/etc/SUSEConnect`",
		Why: "per-host enrolment: clones would share or fight over one identity. Re-register or " +
			"re-join each clone",
	},
	Plan: planHostCredentials,
}

const credReason = "enrols this one host (domain keytab, subscription, registration): clones would share or fight over it"

func planHostCredentials(ctx context.Context, p *Planner) ([]Action, error) {
	// The files and directories that enrol this one host in a domain or
	// a vendor service: the catalogue's host-enrolment item.
	enrolment := catalogue.Lookup(catalogue.Enrolment)
	out, err := p.removePaths(enrolment.Files(), regular, credReason)
	if err != nil {
		return nil, err
	}
	for _, d := range enrolment.Dirs() {
		acts, err := p.removeChildren(d.Path, nil, regular, credReason)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}
