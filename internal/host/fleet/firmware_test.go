package fleet

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestFirmwareUUIDClones is issue #40 item 6 on the host: two clones
// booted with one firmware UUID (Harvester's Clone), whose machine-id
// systemd made from it and whose NoCloud instance-id KubeVirt made the
// same UUID. One guest runs a guestcheck from before instance_id_hash,
// which reports the instance-id raw. No output carries the UUID, the
// shared items still collide, and their fix is the firmware UUID's.
func TestFirmwareUUIDClones(t *testing.T) {
	const uuid, raw = "4C4C4544-0042-3510-8056-B4C04F4D3232", "4c4c4544004235108056b4c04f4d3232"
	h, _ := guestid.MachineIDHash(raw)
	ids := []*guestid.Identity{
		{MachineIDHash: h, MachineIDFrom: guestid.MachineIDFromFirmware, InstanceIDHash: h},
		{MachineIDHash: h, InstanceID: uuid}, // an older guestcheck
	}
	var targets []Target
	for i, id := range ids {
		targets = append(targets, pipeTarget([]string{"copy-1", "copy-2"}[i], &qgafake.Agent{Run: runs(guestReport(t, runner.Pass, id), 0)}))
	}
	r := Survey(context.Background(), targets, nil, Options{VMTimeout: 5 * time.Second})
	got := map[guestid.Item]string{}
	for _, c := range r.Collisions {
		got[c.Item] = c.Fix
	}
	if got[guestid.ItemMachineID] != guestid.FixFromFirmware || got[guestid.ItemInstanceID] != guestid.FixFromFirmware {
		t.Errorf("collisions %+v, want machine-id and instance-id with the firmware fix", r.Collisions)
	}
	for _, format := range []string{FormatText, FormatJSON, FormatJUnit} {
		out := strings.ToLower(strings.ReplaceAll(string(render(t, r, format)), "-", ""))
		if strings.Contains(out, raw) {
			t.Errorf("%s output carries the firmware UUID (the machine-id):\n%s", format, out)
		}
		if !strings.Contains(out, "smbios1") {
			t.Errorf("%s output does not give the firmware fix", format)
		}
	}
	if text := string(render(t, r, FormatText)); !strings.Contains(text, "instance-id hash "+h[:8]+"...") {
		t.Errorf("text does not show the instance-id by its hash:\n%s", text)
	}
}
