// Package netcheck holds guestcheck's network checks: routes (links,
// default routes, gateways, asymmetric routing and the kernel's path to
// nameservers), dns (resolv.conf, the systemd-resolved stack and parallel
// nameserver probes), network-identity (DHCP client identity, cloned
// machine-id and network configuration bound to vanished MAC addresses)
// and network-config (the declared configuration against the running
// system).
//
// Parsing is split from reading: the network configuration formats are
// parsed by the pure readers under internal/guestfile (netplan and
// cloud-init network-config, networkd, nmconn, eni, ifcfg, udevrules),
// which both network-identity and network-config use; this package finds
// the files, links them together and judges. Kernel state is read through
// the Kernel interface into small value types, and the judging functions
// work on those, so that most logic is testable without root.
package netcheck
