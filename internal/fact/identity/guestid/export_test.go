package guestid

import (
	"fmt"
	"strings"
	"testing"
)

// TestExportHidesAndBounds: DHCP identities and the instance-id are
// exported as their AppHash only, addresses only with a network, every
// item within its bound, a long value as its hash, and clones' equal
// values stay equal.
func TestExportHidesAndBounds(t *testing.T) {
	const rawDUID, rawIID = "00:02:00:00:ab:11:61:77:40:de:13:42:c3:a2", "i-0123456789abcdef"
	hash, _ := MachineIDHash("0102030405060708090a0b0c0d0e0f10")
	id := Identity{MachineIDHash: hash, Hostname: "Web-1", InstanceID: rawIID,
		DHCPClients: []DHCPClient{{Kind: KindDUID, Value: rawDUID}}}
	for i := range 20 {
		id.HostKeys = append(id.HostKeys, HostKey{Type: "ssh-ed25519", Fingerprint: fmt.Sprintf("SHA256:key%02d", i)})
		id.Interfaces = append(id.Interfaces, Interface{Name: "eth", MAC: fmt.Sprintf("52:54:00:00:00:%02X", i),
			Addresses: []string{fmt.Sprintf("192.0.2.%d/24", i), fmt.Sprintf("2001:db8::%d/64", i)}})
	}
	nets := map[string]string{}
	for i := range 20 {
		nets[fmt.Sprintf("52:54:00:00:00:%02x", i)] = "bridge br0"
	}
	id.Interfaces = append(id.Interfaces, Interface{Name: "long", MAC: "52:54:00:00:01:00", Addresses: []string{"198.51.100.1/24"}})
	nets["52:54:00:00:01:00"] = strings.Repeat("n", MaxExportedLen+1)

	got := Export(Member{ID: id, Networks: nets})
	n := map[Item]int{}
	for _, e := range got {
		n[e.Item]++
		if strings.Contains(e.Value, rawDUID) || strings.Contains(e.Value, "ab:11") || e.Value == rawIID || len(e.Value) > MaxExportedLen || len(e.Network) > MaxExportedLen {
			t.Errorf("exported %+v: a raw or unbounded value", e)
		}
		if (e.Item == ItemAddress) != (e.Network != "") {
			t.Errorf("exported %+v: network only and always on an address", e)
		}
	}
	want := map[Item]int{ItemMachineID: 1, ItemHostKey: MaxExportedValues, ItemDHCPClient: 1, ItemHostname: 1, ItemInstanceID: 1,
		ItemMAC: MaxExportedValues, ItemAddress: MaxExportedAddresses}
	for it, w := range want {
		if n[it] != w {
			t.Errorf("%d %s values exported, want %d", n[it], it, w)
		}
	}
	if len(got) > MaxExportedSeries {
		t.Errorf("%d values exported, more than MaxExportedSeries %d", len(got), MaxExportedSeries)
	}
	if got[0].Value != hash || got[0].Item != ItemMachineID {
		t.Errorf("first exported %+v, want the machine-id hash %s", got[0], hash)
	}
	again := Export(Member{ID: Identity{InstanceID: rawIID, Hostname: "web-1", DHCPClients: []DHCPClient{{Kind: KindDUID, Value: strings.ToUpper(rawDUID)}}}})
	for _, e := range again {
		if e.Item == ItemInstanceID && e.Value != AppHash(rawIID) || e.Item == ItemDHCPClient && e.Value != AppHash("duid "+rawDUID) || e.Item == ItemHostname && e.Value != "web-1" {
			t.Errorf("exported %+v: not the value a clone with the same identity exports", e)
		}
	}
	// A guest alone knows no network: its addresses are not exported.
	for _, e := range Export(Member{ID: id}) {
		if e.Item == ItemAddress {
			t.Errorf("exported %+v without a network", e)
		}
	}
}

// TestBootHash: a boot ID with or without dashes hashes alike, unlike
// another, and anything else is no boot ID.
func TestBootHash(t *testing.T) {
	a, ok1 := BootHash("0f2c1f7e-3b0d-4e57-9c54-5f0f2b7a9d11")
	b, ok2 := BootHash("0f2c1f7e3b0d4e579c545f0f2b7a9d11")
	c, _ := BootHash("1f2c1f7e-3b0d-4e57-9c54-5f0f2b7a9d11")
	if !ok1 || !ok2 || a != b || a == c || len(a) != 32 || strings.Contains(a, "0f2c1f7e") {
		t.Errorf("BootHash: %s %v, %s %v, %s", a, ok1, b, ok2, c)
	}
	if _, ok := BootHash(""); ok {
		t.Error("BootHash(\"\") ok")
	}
}
