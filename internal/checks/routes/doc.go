// Package netroute judges the routes check: links, default routes (the
// dual-NIC takeover), gateways, asymmetric routing and the kernel's path
// to nameservers. It gathers its facts from internal/fact/netstate, then
// judges them in functions tested on values.
package netroute
