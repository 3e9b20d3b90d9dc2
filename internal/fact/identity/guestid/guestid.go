// Package guestid is a guest's per-instance identity as the host compares
// it across VMs: the items that two clones of one template must not share
// (machine-id, SSH host keys, DHCP client identity, MAC-pinned network
// configuration, hostname, cloud-init instance-id, MACs and addresses).
//
// It is a fact package shared by both binaries: guestcheck puts an
// Identity in its JSON report, sealprep prove compares the Identity of
// each clone it boots, and guestcheck fleet compares those of the VMs on a
// host. All of them decide "shared" with one function, Collisions, so
// the three can never disagree about what counts as a collision.
//
// The machine-id itself never leaves the guest: machine-id(5) asks that
// it not be exposed, so an Identity carries only an application-specific
// hash of it (MachineIDHash), which is as unique as the ID and reveals
// nothing else.
package guestid

import (
	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// AppID is guestcheck's application ID for MachineIDHash (appid.App).
var AppID = appid.App

// MachineIDHash returns the application-specific ID derived from a
// machine-id (32 hex digits, as /etc/machine-id holds it) the way
// sd_id128_get_machine_app_specific(3) derives one: HMAC-SHA256 keyed with
// the machine ID over AppID, the first 16 bytes, marked as a version 4
// UUID. ok is false when id is not a machine ID. sealprep's template
// record hashes the template's ID the same way (appid.MachineIDHash).
func MachineIDHash(id string) (hash string, ok bool) { return appid.MachineIDHash(id) }

// The identity types are the report's (reportv1), so that a report
// decoded from a guest and one read here are one type.
type (
	// Identity is one guest's identity items.
	Identity = reportv1.Identity
	// MachineIDCopy is a machine ID held outside /etc/machine-id.
	MachineIDCopy = reportv1.MachineIDCopy
	// HostKey is one SSH host key, by its public half.
	HostKey = reportv1.HostKey
	// DHCPClient is one DHCP client identity.
	DHCPClient = reportv1.DHCPClient
	// MACBinding is network configuration that applies only to one MAC.
	MACBinding = reportv1.MACBinding
	// Interface is one NIC of a running guest.
	Interface = reportv1.Interface
)
