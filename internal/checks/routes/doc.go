// Package routes judges the routes check: links, default routes (the
// dual-NIC takeover), gateways, asymmetric routing and the kernel's path
// to nameservers. It gathers its facts from internal/fact/netstate, then
// judges them in functions tested on values.
package routes

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// Check verifies links, default routes (the dual-NIC takeover KubeVirt
// and Harvester VMs suffer from), gateways, asymmetric routing and the
// kernel's path to every nameserver. It needs the running kernel.
var Check = runner.Check{
	ID:    "routes",
	Title: "Links and routes",
	Description: "every NIC is up with an address, one default route per family wins on the expected " +
		"interface, gateways answer, and nameservers are reached through that interface",
	Settings: settings.Section(),
	Codes:    Codes,
	Run:      RunRoutes,
}
