package seal

import (
	"context"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
)

var opDHCPLeases = Operation{
	ID:      "dhcp-leases",
	Default: true,
	Summary: "remove DHCP client leases and client identifiers (DUIDs) of dhclient, dhcpcd, NetworkManager and wicked",
	Plan:    planDHCPLeases,
}

const leaseReason = "a clone offering the template's lease or DHCP client identifier (DUID) gets the template's address"

func planDHCPLeases(ctx context.Context, p *Planner) ([]Action, error) {
	var out []Action
	add := func(acts []Action, err error) error {
		out = append(out, acts...)
		return err
	}
	for _, d := range []string{"/var/lib/dhclient", "/var/lib/dhcp", "/var/lib/dhcpcd"} {
		if err := add(p.removeChildren(d, nil, stateTree, leaseReason)); err != nil {
			return nil, err
		}
	}
	if err := add(p.removeChildren("/var/db", prefixed("dhclient.leases"), regular, leaseReason)); err != nil {
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
