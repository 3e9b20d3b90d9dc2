// Package networkidentity holds guestcheck's network-identity check:
// DHCP client identity, cloned machine-id and network configuration bound
// to vanished MAC addresses, so that a cloned or restored VM does not
// share the original's network identity.
//
// The network configuration files come from internal/fact/netconf, the
// one reader network-config (internal/checks/network-config) uses too;
// the kernel's links come from internal/fact/netstate.
package networkidentity
