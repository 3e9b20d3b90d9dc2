package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
)

var opDHCPLeases = Operation{
	ID:      "dhcp-leases",
	Default: true,
	Summary: "remove DHCP client leases and client identifiers (DUIDs) of dhclient, dhcpcd, NetworkManager and wicked, and dhcpcd's secret",
	Plan:    planDHCPLeases,
}

const leaseReason = "a clone offering the template's lease or DHCP client identifier (DUID) gets the template's address"

// dhcpcdSecretReason is why dhcpcd's secret goes: it seeds the stable
// private IPv6 addresses of `slaac private` (dhcpcd.conf(5)).
const dhcpcdSecretReason = "dhcpcd's secret seeds its stable private IPv6 addresses: every clone keeping it would make the template's"

func planDHCPLeases(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	add := func(acts []Action, err error) error {
		out = append(out, acts...)
		return err
	}
	// dhcpcd 7 and later keep the DUID, the secret and the leases in
	// DBDIR (identity.DhcpcdDBDirs): everything in it goes, as in
	// dhclient's directories.
	dirs := append([]string{"/var/lib/dhclient", "/var/lib/dhcp"}, identity.DhcpcdDBDirs...)
	for _, d := range dirs {
		if err := add(p.removeChildren(d, nil, stateTree, leaseReason)); err != nil {
			return nil, err
		}
	}
	// dhcpcd 6 and earlier: the DUID and the secret in /etc (dhcpcd(8)
	// FILES of 6.x), the leases as /var/db/dhcpcd-interface.lease.
	for _, f := range identity.DhcpcdEtcFiles {
		reason := leaseReason
		if strings.HasSuffix(f, ".secret") {
			reason = dhcpcdSecretReason
		}
		if err := add(p.removePath(f, regularLink, reason)); err != nil {
			return nil, err
		}
	}
	if err := add(p.removeChildren(identity.DhcpcdOldDBDir, func(e fs.Entry) bool {
		return strings.HasPrefix(e.Name, "dhclient.leases") || identity.DhcpcdState(e.Name, true) != ""
	}, regular, leaseReason)); err != nil {
		return nil, err
	}
	if err := add(p.removeChildren("/var/lib/NetworkManager", func(e fs.Entry) bool {
		return strings.HasSuffix(e.Name, ".lease")
	}, regular, leaseReason)); err != nil {
		return nil, err
	}
	// SUSE's wicked keeps its DUID and IAID next to the leases.
	if err := add(p.removeChildren("/var/lib/wicked", func(e fs.Entry) bool {
		return e.Name == "duid.xml" || e.Name == "iaid.xml" || strings.HasPrefix(e.Name, "lease-")
	}, regular, leaseReason)); err != nil {
		return nil, err
	}
	return out, nil
}
