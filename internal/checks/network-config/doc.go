// Package networkconfig holds guestcheck's network-config check: the network
// configuration a guest was given (cloud-init network-config, or what it
// or an administrator rendered for netplan, NetworkManager,
// systemd-networkd, ifupdown or ifcfg) against what the interfaces,
// routes and resolver actually have.
//
// The files come from internal/fact/netconf and are turned into one Intent;
// the running system's side is IntentFacts. The judge functions take both
// as values.
package networkconfig
