package checks

import (
	netcheck "github.com/guestcheck/guestcheck/internal/checks/network-identity"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// NetworkIdentity verifies that a cloned or restored VM does not share the
// original's network identity: machine-id, DHCP client identifier and
// network configuration bound to the original's MAC addresses.
var NetworkIdentity = runner.Check{
	ID:    "network-identity",
	Title: "Network identity (clone and restore safety)",
	Description: "The machine-id is set (sealed the way systemd expects in an image) and was made for the cloud-init instance; DHCP clients identify by MAC; " +
		"no network config is bound to a MAC address no NIC has",
	Codes: netcheck.IdentityCodes(),
	Run:   netcheck.RunIdentity,
}
