package seal

import "context"

var opHostCredentials = Operation{
	ID:      "host-credentials",
	Default: true,
	Summary: "remove per-host enrolment: Kerberos keytab, IPA client, SSSD cache, RHSM/RHN, SUSEConnect, yum/smolt UUIDs",
	Plan:    planHostCredentials,
}

// hostCredentialFiles enrol this one host in a domain or a vendor service.
var hostCredentialFiles = []string{
	"/etc/krb5.keytab",
	"/etc/ipa/ca.crt", "/etc/ipa/default.conf",
	"/etc/sysconfig/rhn/systemid", "/etc/sysconfig/rhn/osad-auth.conf",
	"/var/lib/yum/uuid",
	"/etc/sysconfig/hw-uuid", "/etc/smolt/uuid", "/etc/smolt/hw-uuid",
	"/etc/zypp/credentials.d/SCCcredentials", "/etc/SUSEConnect",
}

var hostCredentialDirs = []string{
	"/var/lib/ipa-client/sysrestore", "/var/lib/ipa-client/pki",
	"/var/lib/sss/db",
	"/etc/pki/consumer", "/etc/pki/entitlement",
}

const credReason = "enrols this one host (domain keytab, subscription, registration): clones would share or fight over it"

func planHostCredentials(ctx context.Context, p *Planner) ([]Action, error) {
	out, err := p.removePaths(hostCredentialFiles, regular, credReason)
	if err != nil {
		return nil, err
	}
	for _, d := range hostCredentialDirs {
		acts, err := p.removeChildren(d, nil, regular, credReason)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	return out, nil
}
