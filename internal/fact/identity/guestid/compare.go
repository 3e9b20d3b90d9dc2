package guestid

import (
	"cmp"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
)

// Item names one kind of identity that members must not share.
type Item string

// The items Collisions compares, in the order a report lists them.
const (
	ItemMachineID  Item = "machine-id"
	ItemHostKey    Item = "ssh-host-key"
	ItemDHCPClient Item = "dhcp-client-id"
	ItemMACBinding Item = "mac-binding"
	ItemHostname   Item = "hostname"
	ItemInstanceID Item = "instance-id"
	ItemMAC        Item = "mac"
	ItemAddress    Item = "address"
	// The VM's SMBIOS identity, which a host reads from the VM's
	// definition (KubeVirt's API) before the guest boots.
	ItemFirmwareUUID   Item = "firmware-uuid"
	ItemFirmwareSerial Item = "firmware-serial"
)

// GuestItems are the items a guest's own report carries: what sealprep
// prove compares between the clones it boots.
var GuestItems = []Item{ItemMachineID, ItemHostKey, ItemDHCPClient, ItemMACBinding, ItemHostname, ItemInstanceID, ItemMAC, ItemAddress}

// Items lists every Item in report order: the guest's items, then the
// firmware's, which only a host's definition of the VM holds.
var Items = []Item{ItemMachineID, ItemHostKey, ItemDHCPClient, ItemMACBinding, ItemHostname, ItemInstanceID, ItemMAC, ItemAddress, ItemFirmwareUUID, ItemFirmwareSerial}

// fixes says, per item, what to do when members share it: what to seal
// in the template, or what to give each VM.
var fixes = map[Item]string{
	ItemMachineID:  "seal the template so /etc/machine-id is empty (sealprep operation machine-id) and re-create the clones; a clone that already booted needs a new ID (rm /etc/machine-id; systemd-machine-id-setup; reboot)",
	ItemHostKey:    "seal the template without SSH host keys (sealprep operation ssh-host-keys; cloud-init or sshd-keygen regenerates them at first boot), or on a clone: rm /etc/ssh/ssh_host_*; dpkg-reconfigure openssh-server",
	ItemDHCPClient: "seal the template without DHCP leases and DUID files (sealprep operation dhcp-leases) and with an empty machine-id (systemd-networkd derives its DUID from it)",
	ItemMACBinding: "seal the template without MAC-pinned network configuration (sealprep operation net-mac-pins), or match interfaces by name",
	ItemHostname:   "seal the template with an empty /etc/hostname (sealprep operation hostname) and give each VM its own local-hostname in its metadata",
	ItemInstanceID: "give each VM its own instance-id in its metadata (NoCloud meta-data, the cloud's datasource) and seal the template's cloud-init state (sealprep operation cloud-init)",
	ItemMAC:        "give each VM its own MAC address in its definition (libvirt <mac address=...>, QEMU -device ...,mac=)",
	ItemAddress:    "remove the static address from the template's network configuration (use DHCP or per-VM network-config), or give each VM its own",
	// KubeVirt makes the firmware UUID the NoCloud instance-id
	// (pkg/cloud-init, cloudInitUUIDFromVMI) and QEMU gives it to the
	// guest as the SMBIOS product UUID.
	ItemFirmwareUUID:   "a copied VM (a clone, a restore as a new VM) kept the firmware UUID: KubeVirt makes it the NoCloud instance-id, so cloud-init takes the copy for the same instance and skips its first boot; it is the SMBIOS product UUID, from which systemd makes the machine-id when /etc/machine-id is empty, and which DHCP clients may send as their identity. Clear it on the copy while it is stopped, and KubeVirt generates a new one: kubectl patch vm NAME -n NAMESPACE --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/template/spec/domain/firmware/uuid\"}]'",
	ItemFirmwareSerial: "give each VM its own SMBIOS serial number, or none: remove spec.template.spec.domain.firmware.serial on the copy (kubectl patch vm NAME -n NAMESPACE --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/template/spec/domain/firmware/serial\"}]')",
}

// Fix is what to do about a shared item.
func Fix(it Item) string { return fixes[it] }

// FixFromFirmware is the fix for a machine-id (and a KubeVirt NoCloud
// instance-id) that members share because each is their one firmware
// UUID: sealing the template cannot help, since systemd on KVM makes the
// machine-id from that UUID again on every copy.
const FixFromFirmware = "the shared value is the VMs' one firmware (SMBIOS) UUID, from which systemd on KVM made the machine-id (and which KubeVirt makes the NoCloud instance-id): sealing the template cannot help while the VMs share it. Give each VM its own firmware UUID: KubeVirt spec.template.spec.domain.firmware.uuid (on a stopped copy: kubectl patch vm NAME -n NAMESPACE --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/template/spec/domain/firmware/uuid\"}]', and KubeVirt generates a new one), Proxmox qm set VMID --smbios1 uuid=NEW-UUID; then in each copy: rm /etc/machine-id; systemd-machine-id-setup; reboot"

// fromFirmware reports whether the member's machine-id is its firmware
// UUID: its guest said so (MachineIDFrom), the host's definition of the
// VM holds that UUID, or its instance-id, when a UUID, hashes to it
// (KubeVirt's NoCloud instance-id is the firmware UUID).
func (m Member) fromFirmware() bool {
	h := m.ID.MachineIDHash
	if m.ID.MachineIDFrom == MachineIDFromFirmware {
		return true
	}
	if h == "" {
		return false
	}
	if InstanceKey(m.ID) == h {
		return true
	}
	for _, f := range identity.FirmwareMachineIDs(m.Firmware.UUID) {
		if fh, _ := MachineIDHash(f); fh == h {
			return true
		}
	}
	return false
}

// InstanceKey is the instance-id as Collisions compares it: its hash
// when it is a UUID (a report from before instance_id_hash gives the
// UUID itself, which is hashed here so that it meets the new ones).
func InstanceKey(id Identity) string {
	if id.InstanceIDHash != "" {
		return strings.ToLower(id.InstanceIDHash)
	}
	if h, ok := appid.UUIDHash(id.InstanceID); ok {
		return h
	}
	return id.InstanceID
}

// Member is one guest in a comparison.
type Member struct {
	Name string
	ID   Identity
	// Networks names the network each interface is on, by MAC
	// (lower-case, colon-separated). Addresses are compared only between
	// interfaces on the same network; an interface missing here is on
	// the network "", which every such interface shares.
	Networks map[string]string
	// Firmware is the VM's SMBIOS identity as its host defines it; the
	// guest's own report has none.
	Firmware Firmware
}

// Firmware is a VM's SMBIOS system identity as the host's definition of
// the VM gives it (KubeVirt's spec.domain.firmware).
type Firmware struct {
	// UUID is the SMBIOS product UUID, lower-case.
	UUID string `json:"uuid,omitempty" doc:"the firmware (SMBIOS product) UUID, lower-case; KubeVirt also makes it the NoCloud instance-id"`
	// UUIDFrom says where UUID comes from when the definition does not
	// hold it ("derived from the VM name by KubeVirt").
	UUIDFrom string `json:"uuid_from,omitempty" doc:"where the UUID comes from when the definition does not hold it"`
	// Serial is the SMBIOS system serial number.
	Serial string `json:"serial,omitempty" doc:"the SMBIOS system serial number"`
}

// Collision is one item value that two or more members share.
type Collision struct {
	Item Item `json:"item" schema:"req"`
	// Value is the shared value as a report may show it: a fingerprint,
	// a DUID, a hostname; for the machine-id, its hash (the ID itself is
	// never known here).
	Value string `json:"value" schema:"req,nonempty" doc:"the shared value: a fingerprint, a DUID, a hostname; for the machine-id, and an instance-id that is a UUID, its application-specific hash; an address with its network in parentheses"`
	// Members names the members that share it, sorted.
	Members []string `json:"members" schema:"req,nonempty,minitems=2" doc:"the VMs sharing it, sorted"`
	// Fix is Fix(Item), or FixFromFirmware for a machine-id (or a
	// KubeVirt instance-id) that is the members' shared firmware UUID.
	Fix string `json:"fix" schema:"req,nonempty"`
}

// Collisions compares members item by item and returns every value two
// or more of them share, in Items order, then by value. A member that
// lists one value twice (two NICs with one address) does not collide
// with itself.
func Collisions(members []Member) []Collision {
	seen := map[Item]map[string][]string{}
	add := func(it Item, value, member string) {
		if value == "" {
			return
		}
		if seen[it] == nil {
			seen[it] = map[string][]string{}
		}
		// A member's values come together, so its own repeat (two NICs
		// with one address) is the last one: no search of thousands of
		// members sharing one value.
		if ms := seen[it][value]; len(ms) == 0 || ms[len(ms)-1] != member {
			seen[it][value] = append(ms, member)
		}
	}
	firmware := map[string]bool{}
	for _, m := range members {
		if m.fromFirmware() {
			firmware[m.Name] = true
		}
		for it, vals := range m.values() {
			for _, v := range vals {
				add(it, v, m.Name)
			}
		}
	}
	var out []Collision
	for _, it := range Items {
		for v, ms := range seen[it] {
			if len(ms) < 2 {
				continue
			}
			slices.Sort(ms)
			fix := Fix(it)
			if (it == ItemMachineID || it == ItemInstanceID) && slices.ContainsFunc(ms, func(n string) bool { return firmware[n] }) && firmwareValue(it, v, members, firmware) {
				fix = FixFromFirmware
			}
			out = append(out, Collision{Item: it, Value: displayValue(it, v), Members: ms, Fix: fix})
		}
	}
	slices.SortStableFunc(out, func(a, b Collision) int {
		if c := cmp.Compare(slices.Index(Items, a.Item), slices.Index(Items, b.Item)); c != 0 {
			return c
		}
		return cmp.Compare(a.Value, b.Value)
	})
	return out
}

// values lists a member's comparable values per item. Address values are
// keyed by network ("net\x00addr") so that only addresses on one network
// meet; displayValue takes the key off again.
func (m Member) values() map[Item][]string {
	id := m.ID
	v := map[Item][]string{
		ItemMachineID:      {id.MachineIDHash},
		ItemHostname:       {strings.ToLower(id.Hostname)},
		ItemInstanceID:     {InstanceKey(id)},
		ItemFirmwareUUID:   {strings.ToLower(m.Firmware.UUID)},
		ItemFirmwareSerial: {m.Firmware.Serial},
	}
	for _, c := range id.OtherMachineIDs {
		v[ItemMachineID] = append(v[ItemMachineID], c.Hash)
	}
	for _, k := range id.HostKeys {
		v[ItemHostKey] = append(v[ItemHostKey], k.Fingerprint)
	}
	for _, d := range id.DHCPClients {
		if d.Value != "" { // a kind alone is no identity
			v[ItemDHCPClient] = append(v[ItemDHCPClient], d.Kind+" "+strings.ToLower(d.Value))
		}
	}
	for _, b := range id.MACBindings {
		v[ItemMACBinding] = append(v[ItemMACBinding], strings.ToLower(b.MAC))
	}
	for _, i := range id.Interfaces {
		mac := strings.ToLower(i.MAC)
		v[ItemMAC] = append(v[ItemMAC], mac)
		for _, a := range i.Addresses {
			if ip, _, _ := strings.Cut(a, "/"); ip != "" { // the network alone is no address
				v[ItemAddress] = append(v[ItemAddress], m.Networks[mac]+"\x00"+ip)
			}
		}
	}
	return v
}

// Shared is the collisions of one item among the same members: how a
// report shows them to a person, since three host keys kept from one
// template are one problem with one fix.
type Shared struct {
	Item    Item
	Members []string
	// Values are the shared values as Show shows them.
	Values []string
	Fix    string
}

// Group gathers collisions by item, members and fix, in the order they
// come.
func Group(cols []Collision) []Shared {
	var out []Shared
	for _, c := range cols {
		i := slices.IndexFunc(out, func(s Shared) bool {
			return s.Item == c.Item && s.Fix == c.Fix && slices.Equal(s.Members, c.Members)
		})
		if i < 0 {
			out = append(out, Shared{Item: c.Item, Members: c.Members, Fix: c.Fix})
			i = len(out) - 1
		}
		out[i].Values = append(out[i].Values, Show(c))
	}
	return out
}

// Show is a collision's value as a person reads it. The machine-id's
// hash shows its first 8 digits: enough to tell two apart, and unlike
// the raw ID in /etc/machine-id, so nobody compares the two.
func Show(c Collision) string {
	v := c.Value
	// A UUID instance-id is compared by its hash (InstanceKey), which
	// is shown as the machine-id's is: only a hash is 32 hex digits,
	// since a raw UUID-shaped instance-id never gets this far.
	if _, err := hex.DecodeString(v); err == nil && (c.Item == ItemMachineID || c.Item == ItemInstanceID) && len(v) == 32 {
		return "hash " + v[:8] + "..."
	}
	return v
}

// firmwareValue reports whether the shared value v of item it is the
// firmware-made machine-id of a member that firmware marks: for the
// machine-id, any such member's; for the instance-id, a value equal to
// such a member's machine-id hash (KubeVirt's instance-id is the UUID
// the machine-id was made from). A plain instance-id shared by members
// whose machine-id is the firmware's keeps the instance-id fix.
func firmwareValue(it Item, v string, members []Member, firmware map[string]bool) bool {
	if it == ItemMachineID {
		return true
	}
	for _, m := range members {
		if firmware[m.Name] && m.ID.MachineIDHash != "" && m.ID.MachineIDHash == v {
			return true
		}
	}
	return false
}

func displayValue(it Item, v string) string {
	if it == ItemAddress {
		net, ip, _ := strings.Cut(v, "\x00")
		if net != "" {
			return ip + " (" + net + ")"
		}
		return ip
	}
	return v
}
