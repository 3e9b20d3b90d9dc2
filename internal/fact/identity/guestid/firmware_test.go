package guestid

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// The case of issue #40 item 6: two clones booted with one firmware UUID
// (Harvester's Clone), whose machine-id systemd made from that UUID and
// whose NoCloud instance-id KubeVirt made the same UUID.
const (
	fwUUID    = "4C4C4544-0042-3510-8056-B4C04F4D3232"
	fwMachine = "4c4c4544004235108056b4c04f4d3232"
)

// TestReadFirmwareIdentity: a live guest whose machine-id is its product
// UUID says so, and neither its UUID-shaped instance-id nor anything else
// in its identity carries the raw ID.
func TestReadFirmwareIdentity(t *testing.T) {
	files := map[string]string{
		"/etc/machine-id":                 fwMachine + "\n",
		"/sys/class/dmi/id/product_uuid":  strings.ToLower(fwUUID) + "\n",
		"/var/lib/cloud/data/instance-id": fwUUID + "\n",
	}
	dir := testenv.WriteTree(t, files)
	id := Read(openRoot(t, dir), true)
	want, _ := MachineIDHash(fwMachine)
	if id.MachineIDFrom != MachineIDFromFirmware || id.InstanceID != "" || id.InstanceIDHash != want || id.MachineIDHash != want {
		t.Errorf("identity %+v, want machine_id_from firmware and the instance-id as the machine-id's hash %s", id, want)
	}
	b, _ := json.Marshal(id)
	if s := strings.ToLower(strings.ReplaceAll(string(b), "-", "")); strings.Contains(s, fwMachine) {
		t.Errorf("identity JSON carries the machine-id: %s", b)
	}
	// Off the running system the product UUID is the host's, not the
	// image's: nothing is said.
	if id := Read(openRoot(t, dir), false); id.MachineIDFrom != "" {
		t.Errorf("image root: machine_id_from %q, want none", id.MachineIDFrom)
	}
	files["/etc/machine-id"] = testMachineID + "\n"
	files["/var/lib/cloud/data/instance-id"] = "i-0123abcd\n"
	if id := Read(openRoot(t, testenv.WriteTree(t, files)), true); id.MachineIDFrom != "" || id.InstanceID != "i-0123abcd" || id.InstanceIDHash != "" {
		t.Errorf("machine-id not the UUID: %+v", id)
	}
}

// TestCollisionsFromFirmware: members that share a machine-id made from
// their one firmware UUID get the firmware fix, whichever way it shows;
// a machine-id shared otherwise keeps the sealing fix. A UUID-shaped
// instance-id compares by its hash, with reports that still carry it raw.
func TestCollisionsFromFirmware(t *testing.T) {
	h, _ := MachineIDHash(fwMachine)
	other, _ := MachineIDHash(testMachineID)
	fixOf := func(cols []Collision, it Item) string {
		for _, c := range cols {
			if c.Item == it {
				return c.Fix
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name    string
		members []Member
		mid     string // the machine-id collision's fix
		iid     string // the instance-id collision's fix, "" for none
	}{
		{"the guests say so", []Member{
			{Name: "a", ID: Identity{MachineIDHash: h, MachineIDFrom: MachineIDFromFirmware}},
			{Name: "b", ID: Identity{MachineIDHash: h, MachineIDFrom: MachineIDFromFirmware}},
		}, FixFromFirmware, ""},
		{"KubeVirt: the instance-id is the UUID (one report old, raw)", []Member{
			{Name: "a", ID: Identity{MachineIDHash: h, InstanceIDHash: h}},
			{Name: "b", ID: Identity{MachineIDHash: h, InstanceID: fwUUID}},
		}, FixFromFirmware, FixFromFirmware},
		{"the host's definition holds the UUID, byte-swapped", []Member{
			{Name: "a", ID: Identity{MachineIDHash: h}, Firmware: Firmware{UUID: "44454c4c-4200-1035-8056-b4c04f4d3232"}},
			{Name: "b", ID: Identity{MachineIDHash: h}},
		}, FixFromFirmware, ""},
		{"a template sealed badly", []Member{
			{Name: "a", ID: Identity{MachineIDHash: other, InstanceID: "i-1"}},
			{Name: "b", ID: Identity{MachineIDHash: other, InstanceID: "i-1"}},
		}, Fix(ItemMachineID), Fix(ItemInstanceID)},
		{"firmware machine-id, a shared plain instance-id", []Member{
			{Name: "a", ID: Identity{MachineIDHash: h, MachineIDFrom: MachineIDFromFirmware, InstanceID: "i-1"}},
			{Name: "b", ID: Identity{MachineIDHash: h, MachineIDFrom: MachineIDFromFirmware, InstanceID: "i-1"}},
		}, FixFromFirmware, Fix(ItemInstanceID)},
	} {
		cols := Collisions(tc.members)
		if got := fixOf(cols, ItemMachineID); got != tc.mid {
			t.Errorf("%s: machine-id fix %q, want %q", tc.name, got, tc.mid)
		}
		if got := fixOf(cols, ItemInstanceID); got != tc.iid {
			t.Errorf("%s: instance-id fix %q, want %q", tc.name, got, tc.iid)
		}
		for _, c := range cols {
			if s := strings.ToLower(strings.ReplaceAll(c.Value+Show(c), "-", "")); strings.Contains(s, fwMachine) {
				t.Errorf("%s: collision %+v shows the machine-id", tc.name, c)
			}
			if c.Item == ItemInstanceID && appid.UUIDShaped(c.Value) && Show(c) != "hash "+c.Value[:8]+"..." {
				t.Errorf("%s: instance-id shown as %q, want its hash", tc.name, Show(c))
			}
		}
	}
	if !strings.Contains(FixFromFirmware, "spec.template.spec.domain.firmware.uuid") || !strings.Contains(FixFromFirmware, "smbios1") {
		t.Errorf("the firmware fix names neither platform's setting: %s", FixFromFirmware)
	}
}
