package prove

import (
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/blockid/blocktest"
)

// TestChooseFirmwareGPT reads partition tables as blockid returns them
// (type GUIDs in lower case): an ESP alone boots UEFI, a BIOS boot
// partition BIOS.
func TestChooseFirmwareGPT(t *testing.T) {
	for _, tc := range []struct {
		name  string
		types []string
		want  string
	}{
		{"esp and root", []string{gptESP, "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"}, FirmwareUEFI},
		{"bios boot and esp", []string{gptBIOSBoot, gptESP}, FirmwareBIOS},
		{"root only", []string{"0FC63DAF-8483-4772-8E79-3D69D8477DE4"}, FirmwareBIOS},
	} {
		g := blocktest.GPT{DiskGUID: "0c8c4cd2-0ad6-4b5f-a1b7-3b1b5a0bc2e1"}
		for i, ty := range tc.types {
			first := uint64(2048 * (i + 1))
			g.Parts = append(g.Parts, blocktest.GPTPart{Type: ty, UUID: "8c1f2b0e-5d2a-4c3e-9a11-00000000000" + string(rune('1'+i)), First: first, Last: first + 2047})
		}
		got, err := ChooseFirmware(g.Image(), FirmwareAuto)
		if err != nil || got.Firmware != tc.want {
			t.Errorf("%s: %+v, %v; want %s", tc.name, got, err, tc.want)
		}
	}
}

// TestDefaultNetworkConfig: each clone's own MAC, an address in its own
// /28 (not its network or broadcast address) and the default route
// through QEMU's host there.
func TestDefaultNetworkConfig(t *testing.T) {
	for i, want := range []struct{ addr, gw string }{{"192.0.2.8/28", "192.0.2.2"}, {"192.0.2.24/28", "192.0.2.18"}} {
		c, err := NewClone(i, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		got := string(DefaultNetworkConfig(c))
		for _, s := range []string{`mac_address: "` + c.MAC + `"`, "address: " + want.addr, "gateway: " + want.gw} {
			if !strings.Contains(got, s) {
				t.Errorf("clone %d: no %q in\n%s", i+1, s, got)
			}
		}
	}
}
