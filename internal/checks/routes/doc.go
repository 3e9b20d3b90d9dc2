// Package netroute holds guestcheck's routes and dns checks: links,
// default routes (the dual-NIC takeover), gateways, asymmetric routing
// and the kernel's path to nameservers; the resolver stack and parallel
// nameserver probes. Each gathers its facts from internal/fact/netstate, then
// judges them in functions tested on values.
package netroute
