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
	"encoding/hex"
	"strings"
)

// AppID is guestcheck's application ID for MachineIDHash, a fixed random
// 128-bit value, in the manner of systemd's sd_id128_get_machine_app_specific.
var AppID = [16]byte{0x32, 0x2e, 0x36, 0xd1, 0x0a, 0x80, 0x4d, 0x5d, 0x9f, 0x54, 0x68, 0xdf, 0x96, 0x22, 0xeb, 0x0f}

// MachineIDHash returns the application-specific ID derived from a
// machine-id (32 hex digits, as /etc/machine-id holds it) the way
// sd_id128_get_machine_app_specific(3) derives one: HMAC-SHA256 keyed with
// the machine ID over AppID, the first 16 bytes, marked as a version 4
// UUID. ok is false when id is not a machine ID.
func MachineIDHash(id string) (hash string, ok bool) {
	id = strings.ToLower(strings.TrimSpace(id))
	key, err := hex.DecodeString(id)
	if err != nil || len(key) != 16 {
		return "", false
	}
	return hex.EncodeToString(appSpecific(key, AppID)), true
}

// Identity is one guest's identity items. Empty fields were not found or
// could not be read; Unread says which and why.
type Identity struct {
	// MachineIDHash is MachineIDHash of /etc/machine-id, empty when the
	// file holds no ID (a sealed template, or unreadable).
	MachineIDHash string `json:"machine_id_hash,omitempty"`
	// MachineIDState is the file's state as identity.Kind names it
	// (valid, empty, uninitialized, missing, ...).
	MachineIDState string `json:"machine_id_state,omitempty"`
	// HostKeys are the SSH host keys' public fingerprints.
	HostKeys []HostKey `json:"ssh_host_keys,omitempty"`
	// DHCPClients are the DHCP client identities the guest's network
	// stack presents (or will present) to a DHCP server.
	DHCPClients []DHCPClient `json:"dhcp_client_ids,omitempty"`
	// MACBindings are network configuration entries that apply only to
	// one MAC address: a clone with a new MAC does not match them.
	MACBindings []MACBinding `json:"mac_bindings,omitempty"`
	// Hostname is the kernel hostname on a running guest, the first name
	// of /etc/hostname under an image root.
	Hostname string `json:"hostname,omitempty"`
	// InstanceID is cloud-init's current instance-id.
	InstanceID string `json:"instance_id,omitempty"`
	// Interfaces are the running guest's NICs (never loopback), with
	// their addresses; empty under an image root.
	Interfaces []Interface `json:"interfaces,omitempty"`
	// Unread lists the items that could not be read, each "item: why".
	Unread []string `json:"unread,omitempty"`
}

// HostKey is one SSH host key, by its public half.
type HostKey struct {
	Type        string `json:"type"`        // ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa
	Fingerprint string `json:"fingerprint"` // SHA256:..., as ssh-keygen -l prints it
	Path        string `json:"path,omitempty"`
}

// DHCPClient is one DHCP client identity: what a DHCP server keys its
// leases on, besides the MAC.
type DHCPClient struct {
	// Kind is "duid" (DHCPv6, and DHCPv4 clients that send an RFC 4361
	// identifier) or "client-id" (a DHCPv4 option 61 value).
	Kind string `json:"kind"`
	// Value is the identifier in lower-case hex, colon-separated.
	Value string `json:"value"`
	// Source is where it comes from: a lease or DUID file's guest path,
	// or how the client derives it ("systemd-networkd: from machine-id").
	Source string `json:"source"`
	// Interface is the NIC it is for, when the source says.
	Interface string `json:"interface,omitempty"`
}

// MACBinding is network configuration that applies only to the NIC with
// one MAC address.
type MACBinding struct {
	MAC  string `json:"mac"`
	At   string `json:"at"`   // guest path:line
	Kind string `json:"kind"` // "netplan match: macaddress", ...
}

// Interface is one NIC of a running guest.
type Interface struct {
	Name      string   `json:"name"`
	MAC       string   `json:"mac,omitempty"`
	Addresses []string `json:"addresses,omitempty"` // CIDR, global scope only
}
