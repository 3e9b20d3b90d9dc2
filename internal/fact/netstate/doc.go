// Package netstate is the guest's network state as the network checks
// judge it: the kernel's links, addresses, routes, rules and neighbours
// (read through the Kernel interface into small value types), the
// Topology built over them, which links are NICs, and the resolver
// configuration (resolv.conf and the systemd-resolved stack).
//
// The judges (internal/checks/routes, internal/checks/dns, internal/checks/network-config, internal/checks/network-identity)
// work on these values, so that most of their logic is testable without
// root.
package netstate
