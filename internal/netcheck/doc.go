// Package netcheck holds guestcheck's network checks: routes (links,
// default routes, gateways, asymmetric routing and the kernel's path to
// nameservers), dns (resolv.conf, the systemd-resolved stack and parallel
// nameserver probes) and network-identity (DHCP client identity, cloned
// machine-id and network configuration bound to vanished MAC addresses).
//
// Parsing is split from reading: every file format has a pure parser over
// bytes that reports problems with file and line. Kernel state is read
// through the Kernel interface into small value types, and the judging
// functions work on those, so that most logic is testable without root.
package netcheck
