package reportv1

// Identity is one guest's identity items. Empty fields were not found or
// could not be read; Unread says which and why.
type Identity struct {
	// MachineIDHash is guestid.MachineIDHash of /etc/machine-id, empty when the
	// file holds no ID (a sealed template, or unreadable).
	MachineIDHash string `json:"machine_id_hash,omitempty" schema:"pattern=hex32" doc:"/etc/machine-id as an application-specific ID (HMAC-SHA256 keyed with the ID over guestcheck's application ID 322e36d10a804d5d9f5468df9622eb0f, as sd_id128_get_machine_app_specific derives one); the ID itself is never reported"`
	// MachineIDState is the file's state as identity.Kind names it
	// (valid, empty, uninitialized, missing, ...).
	MachineIDState string `json:"machine_id_state,omitempty" schema:"enum=valid|all zero|empty|uninitialized|not a machine ID|missing|unreadable"`
	// MachineIDFrom is "firmware" when, on the running system,
	// /etc/machine-id is the VM's SMBIOS product UUID (as written or with
	// its first three fields byte-swapped): systemd on KVM makes it so
	// when the file is empty, and every VM with that UUID gets the ID.
	// Empty when it is not, or when the UUID could not be read (root
	// only).
	MachineIDFrom string `json:"machine_id_from,omitempty" schema:"enum=firmware" doc:"firmware when, on the running system, /etc/machine-id is the SMBIOS product UUID (systemd on KVM makes it so when the file is empty): VMs sharing the UUID share the ID, and need distinct firmware UUIDs; absent otherwise or when the UUID cannot be read (root only)"`
	// OtherMachineIDs are the machine IDs the guest holds besides
	// /etc/machine-id, each hashed as MachineIDHash is: the D-Bus copy
	// when it is a file of its own (libdbus reads it first), and the IDs
	// the image hands systemd at boot (systemd.machine_id= on a kernel
	// command line source, a system.machine_id credential). One that
	// equals MachineIDHash is left out. Clones that share one share the
	// machine ID it stands for.
	OtherMachineIDs []MachineIDCopy `json:"other_machine_ids,omitempty" doc:"machine IDs the guest holds besides /etc/machine-id, hashed as machine_id_hash is: the D-Bus copy when it is a file of its own, and IDs the image hands systemd at boot (systemd.machine_id= on a kernel command line source, a system.machine_id credential); one equal to machine_id_hash is left out"`
	// HostKeys are the SSH host keys' public fingerprints.
	HostKeys []HostKey `json:"ssh_host_keys,omitempty" doc:"the host keys sshd loads (its HostKey lines, else its three defaults), by public fingerprint"`
	// DHCPClients are the DHCP client identities the guest's network
	// stack presents (or will present) to a DHCP server.
	DHCPClients []DHCPClient `json:"dhcp_client_ids,omitempty" doc:"the DHCP client identities the guest's clients present: from dhclient, dhcpcd, NetworkManager and systemd-networkd state files, and the DUID systemd-networkd derives from the machine-id"`
	// MACBindings are network configuration entries that apply only to
	// one MAC address: a clone with a new MAC does not match them.
	MACBindings []MACBinding `json:"mac_bindings,omitempty" doc:"network configuration that applies only to one MAC address"`
	// Hostname is the kernel hostname on a running guest, the first name
	// of /etc/hostname under an image root.
	Hostname string `json:"hostname,omitempty" doc:"the kernel hostname; the first name of /etc/hostname under --root"`
	// InstanceID is cloud-init's current instance-id, unless it is a
	// UUID: then InstanceIDHash holds it.
	InstanceID string `json:"instance_id,omitempty" doc:"cloud-init's current instance-id; absent when it is a UUID, which instance_id_hash then gives"`
	// InstanceIDHash is a UUID-shaped instance-id hashed as
	// MachineIDHash is (its 32 hex digits as the key): KubeVirt makes
	// the firmware UUID the NoCloud instance-id, and systemd on KVM makes
	// that UUID the machine-id, so the raw value may be the machine-id.
	InstanceIDHash string `json:"instance_id_hash,omitempty" schema:"pattern=hex32" doc:"cloud-init's instance-id when it is a UUID, hashed as machine_id_hash is (keyed with its 32 hex digits), since it may be the machine-id itself (KubeVirt's NoCloud instance-id is the firmware UUID, from which systemd on KVM makes the machine-id); equal to machine_id_hash when the machine-id was made from it"`
	// Interfaces are the running guest's NICs (never loopback), with
	// their addresses; empty under an image root.
	Interfaces []Interface `json:"interfaces,omitempty" doc:"the running guest's links but loopback (absent under --root)"`
	// Unread lists the items that could not be read, each "item: why".
	Unread []string `json:"unread,omitempty" schema:"nonempty" doc:"ITEM: why, for each item that could not be read"`
}

// MachineIDCopy is a machine ID held outside /etc/machine-id.
type MachineIDCopy struct {
	// Hash is the ID hashed as MachineIDHash is.
	Hash string `json:"hash" schema:"req,pattern=hex32"`
	// Source is the guest path that holds it.
	Source string `json:"source" schema:"req,nonempty" doc:"the guest path that holds the ID"`
}

// HostKey is one SSH host key, by its public half.
type HostKey struct {
	Type        string `json:"type" schema:"req,nonempty"`                   // ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa
	Fingerprint string `json:"fingerprint" schema:"req,pattern=fingerprint"` // SHA256:..., as ssh-keygen -l prints it
	Path        string `json:"path,omitempty"`
}

// DHCPClient is one DHCP client identity: what a DHCP server keys its
// leases on, besides the MAC.
type DHCPClient struct {
	// Kind is "duid" (DHCPv6, and DHCPv4 clients that send an RFC 4361
	// identifier) or "client-id" (a DHCPv4 option 61 value).
	Kind string `json:"kind" schema:"req,enum=duid|client-id"`
	// Value is the identifier in lower-case hex, colon-separated.
	Value string `json:"value" schema:"req,pattern=hexbytes"`
	// Source is where it comes from: a lease or DUID file's guest path,
	// or how the client derives it ("systemd-networkd: from machine-id").
	Source string `json:"source" schema:"req,nonempty" doc:"guest path[:line] of the lease or DUID file, or how the client derives the value"`
	// Interface is the NIC it is for, when the source says.
	Interface string `json:"interface,omitempty"`
}

// MACBinding is network configuration that applies only to the NIC with
// one MAC address.
type MACBinding struct {
	MAC  string `json:"mac" schema:"req,pattern=hexbytes"`
	At   string `json:"at" schema:"req,nonempty" doc:"guest path:line"` // guest path:line
	Kind string `json:"kind" schema:"req,nonempty"`                     // "netplan match: macaddress", ...
}

// Interface is one NIC of a running guest.
type Interface struct {
	Name      string   `json:"name" schema:"req,nonempty"`
	MAC       string   `json:"mac,omitempty" schema:"pattern=hexbytes"`
	Addresses []string `json:"addresses,omitempty" schema:"pattern=cidr" doc:"global-scope addresses as CIDR"` // CIDR, global scope only
}
