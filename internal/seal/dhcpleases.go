package seal

import (
	"context"
	"path"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

var opDHCPLeases = Operation{
	ID:      "dhcp-leases",
	Default: true,
	Summary: "remove DHCP client leases and client identifiers (DUIDs) of dhclient, dhcpcd, NetworkManager and wicked, and dhcpcd's secret",
	Kept:    keptMany("DHCP leases and client identifiers"),
	Doc: Doc{
		What: "removes the contents of `/var/lib/dhclient`, `/var/lib/dhcp`, and dhcpcd's DBDIR " +
			"`/var/lib/dhcpcd` (as distributions build it) and `/var/db/dhcpcd` (dhcpcd's default): " +
			"since dhcpcd 7 its `duid`, `secret`, `*.lease` and `*.lease6` (dhcpcd(8) FILES); dhcpcd " +
			"6's `/etc/dhcpcd.duid`, `/etc/dhcpcd.secret` and `/var/db/dhcpcd-*.lease`/`.lease6`; " +
			"`/var/db/dhclient.leases.*`, `/var/lib/NetworkManager/*.lease` (dhclient and internal " +
			"client), and wicked's `duid.xml`, `iaid.xml`, `lease-*` (SUSE). Files are removed by " +
			"name: a link goes as a link, never followed, and a hard-linked file's other names keep " +
			"their inode",
		Why: "a clone presenting the template's lease or DUID gets the template's address; dhcpcd's " +
			"secret seeds its stable private IPv6 addresses (`slaac private`, dhcpcd.conf(5)), which " +
			"clones would share. guestcheck `--root` fails a template holding any of them " +
			"(`identity-template-dhcp-state`)",
	},
	Plan: planDHCPLeases,
}

const leaseReason = "a clone offering the template's lease or DHCP client identifier (DUID) gets the template's address"

// dhcpcdSecretReason is why dhcpcd's secret goes: it seeds the stable
// private IPv6 addresses of `slaac private` (dhcpcd.conf(5)).
const dhcpcdSecretReason = "dhcpcd's secret seeds its stable private IPv6 addresses: every clone keeping it would make the template's"

func planDHCPLeases(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	for _, name := range identity.DHCPStateItems {
		it := catalogue.Lookup(name)
		reason := leaseReason
		if name == catalogue.DhcpcdSecret {
			reason = dhcpcdSecretReason
		}
		acts, err := p.removePaths(it.Files(), regularLink, reason)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
		for _, d := range it.Dirs() {
			acts, err := p.removeChildren(d.Path, func(e fs.Entry) bool {
				ok, _ := path.Match(d.Match, e.Name)
				return d.Match == "" || ok
			}, regularLink, reason)
			if err != nil {
				return nil, err
			}
			out = append(out, acts...)
		}
	}
	return out, nil
}
