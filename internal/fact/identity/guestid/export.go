package guestid

import (
	"encoding/hex"
	"slices"
	"strings"
)

// Bounds on what Export gives for one guest, so that a guest (or a
// hostile report) cannot flood a Prometheus with series: at most
// MaxExportedValues values of each item, MaxExportedAddresses
// addresses, and no value longer than MaxExportedLen bytes (a longer one
// is exported as its AppHash, so that it still compares). A guest has at
// most MaxExportedSeries values in all.
const (
	MaxExportedValues    = 8
	MaxExportedAddresses = 16
	MaxExportedLen       = 128
	// MaxExportedSeries is one machine-id, hostname and instance-id each,
	// MaxExportedValues host keys, DHCP client identities, MAC bindings
	// and MACs, and MaxExportedAddresses addresses.
	MaxExportedSeries = 3 + 4*MaxExportedValues + MaxExportedAddresses
)

// Exported is one identity value as metrics carry it.
type Exported struct {
	Item Item
	// Value is the value as Collisions compares it, except that a DHCP
	// client identity and the instance-id are their AppHash: the raw
	// values name the guest to anyone who reads the metrics.
	Value string
	// Network is the network of an address (Member.Networks); empty for
	// the other items.
	Network string
}

// Export lists a member's identity values for metrics, in Items order
// then by value, within the bounds above; when an item has more values
// than its bound, the first ones in sorted order are kept, so the choice
// is the same on every run. Addresses are exported only with a network
// from m.Networks: an address on a network nobody named never collides
// (see Collisions' callers), and a guest does not know its network.
func Export(m Member) []Exported {
	vals := m.values()
	var out []Exported
	for _, it := range Items {
		if it == ItemFirmwareUUID || it == ItemFirmwareSerial {
			// The host's definition of the VM, not the guest's report:
			// not exported (guestcheck fleet compares it on its host),
			// and the raw UUID may be the machine-id's source.
			continue
		}
		var got []Exported
		for _, v := range vals[it] {
			if v == "" {
				continue
			}
			e := Exported{Item: it, Value: v}
			switch it {
			case ItemDHCPClient, ItemInstanceID:
				e.Value = AppHash(v)
			case ItemAddress:
				e.Network, e.Value, _ = strings.Cut(v, "\x00")
				if e.Network == "" || e.Value == "" {
					continue
				}
				if len(e.Network) > MaxExportedLen {
					e.Network = AppHash(e.Network)
				}
			}
			if len(e.Value) > MaxExportedLen {
				e.Value = AppHash(e.Value)
			}
			got = append(got, e)
		}
		slices.SortFunc(got, func(a, b Exported) int {
			return strings.Compare(a.Network+"\x00"+a.Value, b.Network+"\x00"+b.Value)
		})
		got = slices.Compact(got)
		limit := MaxExportedValues
		if it == ItemAddress {
			limit = MaxExportedAddresses
		}
		out = append(out, got[:min(len(got), limit)]...)
	}
	return out
}

// AppHash hashes an identity value that must not be shown as it is (a
// DHCP client identity, an instance-id) by the rule MachineIDHash
// follows: HMAC-SHA256 keyed with the value over AppID, its first 16
// bytes as a version 4 UUID, in hex. Equal values give equal hashes on
// every guest and host, so they still compare.
func AppHash(v string) string {
	return hex.EncodeToString(appSpecific([]byte(v), AppID))
}

// BootHash is the application-specific ID of a boot ID (the kernel's
// /proc/sys/kernel/random/boot_id, a UUID), as
// sd_id128_get_boot_app_specific(3) derives it with AppID. It tells two
// running guests apart even when they are clones sharing everything
// else, and is the same in every report of one boot. ok is false when
// id is not a boot ID.
func BootHash(id string) (hash string, ok bool) {
	return MachineIDHash(strings.ReplaceAll(id, "-", ""))
}
