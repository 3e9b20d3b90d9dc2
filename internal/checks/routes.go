package checks

import (
	netroute "github.com/guestcheck/guestcheck/internal/checks/routes"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Routes verifies links, default routes (the dual-NIC takeover KubeVirt
// and Harvester VMs suffer from), gateways, asymmetric routing and the
// kernel's path to every nameserver. It needs the running kernel.
var Routes = runner.Check{
	ID:    "routes",
	Title: "Links and routes",
	Description: "Every NIC is up with an address; one default route per family wins, on the expected " +
		"interface; gateways answer; nameservers are reached through that interface",
	Codes: netroute.RoutesCodes(),
	Run:   netroute.RunRoutes,
}
