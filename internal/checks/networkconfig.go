package checks

import (
	netintent "github.com/guestcheck/guestcheck/internal/checks/network-config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// NetworkConfig compares the network configuration the VM was given
// (cloud-init's network-config, or what it or an administrator rendered
// for netplan, NetworkManager, systemd-networkd, ifupdown or ifcfg) with
// what the interfaces, routes and resolver actually have.
var NetworkConfig = runner.Check{
	ID:    "network-config",
	Title: "Declared network configuration",
	Description: "Every interface the network config declares exists (by name or match), is up and has its " +
		"addresses, lease, default gateway, nameservers, MTU, VLAN ID and members",
	Codes: netintent.NetworkConfigCodes(),
	Run:   netintent.RunNetworkConfig,
}
