package guestid

import (
	"reflect"
	"slices"
	"testing"
)

func TestCollisions(t *testing.T) {
	hashA, _ := MachineIDHash("0102030405060708090a0b0c0d0e0f10")
	hashB, _ := MachineIDHash("1102030405060708090a0b0c0d0e0f10")
	key := func(fp string) []HostKey {
		return []HostKey{{Type: "ssh-ed25519", Fingerprint: fp, Path: "/etc/ssh/ssh_host_ed25519_key"}}
	}
	nic := func(mac string, addrs ...string) []Interface {
		return []Interface{{Name: "eth0", MAC: mac, Addresses: addrs}}
	}
	type want struct {
		item    Item
		value   string
		members []string
	}
	for _, tc := range []struct {
		name    string
		members []Member
		want    []want
	}{
		{"shared machine-id", []Member{
			{Name: "b", ID: Identity{MachineIDHash: hashA}},
			{Name: "a", ID: Identity{MachineIDHash: hashA}},
			{Name: "c", ID: Identity{MachineIDHash: hashB}},
		}, []want{{ItemMachineID, hashA, []string{"a", "b"}}}},
		{"shared host key", []Member{
			{Name: "a", ID: Identity{HostKeys: key("SHA256:one")}},
			{Name: "b", ID: Identity{HostKeys: append(key("SHA256:two"), key("SHA256:one")...)}},
		}, []want{{ItemHostKey, "SHA256:one", []string{"a", "b"}}}},
		{"shared dhcp id, case folded; kinds kept apart", []Member{
			{Name: "a", ID: Identity{DHCPClients: []DHCPClient{{Kind: KindDUID, Value: "00:02:00:00:AB:11"}}}},
			{Name: "b", ID: Identity{DHCPClients: []DHCPClient{{Kind: KindDUID, Value: "00:02:00:00:ab:11"}}}},
			{Name: "c", ID: Identity{DHCPClients: []DHCPClient{{Kind: KindClientID, Value: "00:02:00:00:ab:11"}}}},
		}, []want{{ItemDHCPClient, "duid 00:02:00:00:ab:11", []string{"a", "b"}}}},
		{"address on the same network", []Member{
			{Name: "a", ID: Identity{Interfaces: nic("52:54:00:00:00:01", "192.0.2.10/24")}, Networks: map[string]string{"52:54:00:00:00:01": "lan"}},
			{Name: "b", ID: Identity{Interfaces: nic("52:54:00:00:00:02", "192.0.2.10/24")}, Networks: map[string]string{"52:54:00:00:00:02": "lan"}},
		}, []want{{ItemAddress, "192.0.2.10 (lan)", []string{"a", "b"}}}},
		{"address on different networks", []Member{
			{Name: "a", ID: Identity{Interfaces: nic("52:54:00:00:00:01", "192.0.2.10/24")}, Networks: map[string]string{"52:54:00:00:00:01": "lan"}},
			{Name: "b", ID: Identity{Interfaces: nic("52:54:00:00:00:02", "192.0.2.10/24")}, Networks: map[string]string{"52:54:00:00:00:02": "dmz"}},
		}, nil},
		{"address with networks unknown", []Member{
			{Name: "a", ID: Identity{Interfaces: nic("52:54:00:00:00:01", "2001:db8::5/64")}},
			{Name: "b", ID: Identity{Interfaces: nic("52:54:00:00:00:02", "2001:db8::5/64")}},
		}, []want{{ItemAddress, "2001:db8::5", []string{"a", "b"}}}},
		{"shared MAC", []Member{
			{Name: "a", ID: Identity{Interfaces: nic("52:54:00:00:00:01")}},
			{Name: "b", ID: Identity{Interfaces: nic("52:54:00:00:00:01")}},
		}, []want{{ItemMAC, "52:54:00:00:00:01", []string{"a", "b"}}}},
		{"a member listing one value twice", []Member{
			{Name: "a", ID: Identity{Interfaces: []Interface{
				{Name: "eth0", MAC: "52:54:00:00:00:01", Addresses: []string{"198.51.100.4/24"}},
				{Name: "eth1", MAC: "52:54:00:00:00:02", Addresses: []string{"198.51.100.4/24"}},
			}, HostKeys: append(key("SHA256:x"), key("SHA256:x")...)}},
			{Name: "b", ID: Identity{Interfaces: nic("52:54:00:00:00:03", "203.0.113.9/24")}},
		}, nil},
		{"empty values never collide", []Member{
			{Name: "a", ID: Identity{MachineIDState: "empty", Interfaces: []Interface{{Name: "eth0", Addresses: []string{""}}},
				DHCPClients: []DHCPClient{{Kind: KindDUID}}, HostKeys: []HostKey{{Type: "ssh-rsa"}}, MACBindings: []MACBinding{{Kind: "ifcfg HWADDR"}}}, Networks: map[string]string{"": "lan"}},
			{Name: "b", ID: Identity{MachineIDState: "empty", Interfaces: []Interface{{Name: "eth0", Addresses: []string{"/24"}}},
				DHCPClients: []DHCPClient{{Kind: KindDUID}}, HostKeys: []HostKey{{Type: "ssh-rsa"}}, MACBindings: []MACBinding{{Kind: "ifcfg HWADDR"}}}, Networks: map[string]string{"": "lan"}},
		}, nil},
		{"hostname, instance-id and MAC binding, in item order", []Member{
			{Name: "a", ID: Identity{Hostname: "Web-1", InstanceID: "i-1", MACBindings: []MACBinding{{MAC: "52:54:00:aa:00:01", At: "/etc/netplan/50-cloud-init.yaml:6", Kind: "netplan match: macaddress"}}}},
			{Name: "b", ID: Identity{Hostname: "web-1", InstanceID: "i-1", MACBindings: []MACBinding{{MAC: "52:54:00:AA:00:01", At: "/etc/netplan/50-cloud-init.yaml:6", Kind: "netplan match: macaddress"}}}},
		}, []want{
			{ItemMACBinding, "52:54:00:aa:00:01", []string{"a", "b"}},
			{ItemHostname, "web-1", []string{"a", "b"}},
			{ItemInstanceID, "i-1", []string{"a", "b"}},
		}},
		{"firmware UUID case folded, after the guest's items; serial apart", []Member{
			{Name: "ns/a", ID: Identity{Hostname: "a"}, Firmware: Firmware{UUID: "6A1A24A1-4061-4607-8BF4-A3963D0C5895", Serial: "s-1"}},
			{Name: "ns/b", ID: Identity{Hostname: "b"}, Firmware: Firmware{UUID: "6a1a24a1-4061-4607-8bf4-a3963d0c5895", Serial: "s-2"}},
			{Name: "ns/c", Firmware: Firmware{UUID: "7a1a24a1-4061-4607-8bf4-a3963d0c5895", Serial: "s-2"}},
		}, []want{
			{ItemFirmwareUUID, "6a1a24a1-4061-4607-8bf4-a3963d0c5895", []string{"ns/a", "ns/b"}},
			{ItemFirmwareSerial, "s-2", []string{"ns/b", "ns/c"}},
		}},
		{"one member", []Member{{Name: "a", ID: Identity{MachineIDHash: hashA, Hostname: "x"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []want
			for _, c := range Collisions(tc.members) {
				got = append(got, want{c.Item, c.Value, c.Members})
				if c.Fix == "" || c.Fix != Fix(c.Item) {
					t.Errorf("%s: fix %q", c.Item, c.Fix)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("collisions %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestFixes: every item has a fix, so a report never shows a collision
// without one.
func TestFixes(t *testing.T) {
	for _, it := range Items {
		if Fix(it) == "" {
			t.Errorf("%s has no fix", it)
		}
	}
	if len(fixes) != len(Items) || slices.Contains(Items, Item("")) {
		t.Errorf("fixes %d for %d items", len(fixes), len(Items))
	}
}

// TestCollisionsCapturedClones reads the real Debian 12 trees the VM
// tests captured (internal/checks/network-identity/testdata/identity: a template and two
// unsealed clones of its disk) and compares them: the clones share the
// template's machine-id, and nothing else the trees hold.
func TestCollisionsCapturedClones(t *testing.T) {
	var members []Member
	for _, c := range []string{"debian12-template", "debian12-unsealed-clone-1", "debian12-unsealed-clone-2"} {
		id := Read(openRoot(t, "../../../checks/network-identity/testdata/identity/"+c+"/root"), false)
		if id.MachineIDState != "valid" || id.InstanceID == "" || id.Unread != nil {
			t.Fatalf("%s: %+v", c, id)
		}
		members = append(members, Member{Name: c, ID: id})
	}
	got := Collisions(members)
	if len(got) != 1 || got[0].Item != ItemMachineID || len(got[0].Members) != 3 || got[0].Value != members[0].ID.MachineIDHash {
		t.Errorf("collisions %+v, want the machine-id's hash shared by all three", got)
	}
}

// TestGroup: kept host keys of two clones are one group with one fix; a
// key shared by a different set of members is another; the machine-id
// shows by a short hash, never the whole of it.
func TestGroup(t *testing.T) {
	fix := Fix(ItemHostKey)
	cols := []Collision{
		{Item: ItemMachineID, Value: "4f1d2c3b4a5968778695a4b3c2d1e0f9", Members: []string{"a", "b"}, Fix: Fix(ItemMachineID)},
		{Item: ItemHostKey, Value: "SHA256:one", Members: []string{"a", "b"}, Fix: fix},
		{Item: ItemHostKey, Value: "SHA256:two", Members: []string{"a", "b"}, Fix: fix},
		{Item: ItemHostKey, Value: "SHA256:three", Members: []string{"a", "c"}, Fix: fix},
		{Item: ItemHostname, Value: "tmpl", Members: []string{"a", "b"}, Fix: Fix(ItemHostname)},
	}
	got := Group(cols)
	want := []Shared{
		{Item: ItemMachineID, Members: []string{"a", "b"}, Values: []string{"hash 4f1d2c3b..."}, Fix: Fix(ItemMachineID)},
		{Item: ItemHostKey, Members: []string{"a", "b"}, Values: []string{"SHA256:one", "SHA256:two"}, Fix: fix},
		{Item: ItemHostKey, Members: []string{"a", "c"}, Values: []string{"SHA256:three"}, Fix: fix},
		{Item: ItemHostname, Members: []string{"a", "b"}, Values: []string{"tmpl"}, Fix: Fix(ItemHostname)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Group:\n got %+v\nwant %+v", got, want)
	}
	// A hostname of 32 hex digits is not a machine-id: shown whole.
	if s := Show(Collision{Item: ItemHostname, Value: "4f1d2c3b4a5968778695a4b3c2d1e0f9"}); s != "4f1d2c3b4a5968778695a4b3c2d1e0f9" {
		t.Errorf("a hex hostname shows as %q", s)
	}
}
