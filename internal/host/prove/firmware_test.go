package prove

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/blockid/blocktest"
)

const (
	linuxFS = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
)

func gpt(types ...string) []byte {
	g := blocktest.GPT{DiskGUID: "11111111-2222-3333-4444-555555555555"}
	for i, ty := range types {
		g.Parts = append(g.Parts, blocktest.GPTPart{Type: ty, UUID: "AAAAAAAA-BBBB-CCCC-DDDD-00000000000" + string(rune('1'+i)), First: uint64(2048 * (i + 1)), Last: uint64(2048*(i+2) - 1)})
	}
	return g.Image()
}

func TestChooseFirmware(t *testing.T) {
	withCode := func(b []byte) []byte { b = append([]byte(nil), b...); b[0], b[1] = 0xeb, 0x63; return b }
	mbr := func(ty byte) []byte {
		m := blocktest.MBR{Signature: 0x1234}
		m.Primary[0] = blocktest.MBRPart{Type: ty, Start: 2048, Sectors: 4096}
		return m.Image()
	}
	for _, c := range []struct {
		name, want, reason string
		head               []byte
	}{
		{"GPT with a BIOS boot partition", FirmwareBIOS, "BIOS boot partition", gpt(gptBIOSBoot, gptESP, linuxFS)},
		{"GPT with only an ESP", FirmwareUEFI, "EFI system partition", gpt(gptESP, linuxFS)},
		{"GPT with an ESP and MBR boot code", FirmwareBIOS, "boot code", withCode(gpt(gptESP, linuxFS))},
		{"GPT without an ESP", FirmwareBIOS, "default", gpt(linuxFS)},
		{"MBR with boot code", FirmwareBIOS, "boot code", withCode(mbr(0x83))},
		{"MBR with an ESP only", FirmwareUEFI, "EFI system partition", mbr(0xef)},
	} {
		got, err := ChooseFirmware(c.head, FirmwareAuto)
		if err != nil || got.Firmware != c.want || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("%s: %+v, %v; want %s (%s)", c.name, got, err, c.want, c.reason)
		}
	}
	if _, err := ChooseFirmware(make([]byte, 34*512), FirmwareAuto); err == nil || !strings.Contains(err.Error(), "--kernel") {
		t.Errorf("no partition table: %v, want a refusal naming --kernel", err)
	}
	if got, _ := ChooseFirmware(gpt(gptBIOSBoot), FirmwareUEFI); got.Firmware != FirmwareUEFI || got.Reason != "--firmware uefi" {
		t.Errorf("--firmware uefi: %+v", got)
	}
}

func TestFindOVMF(t *testing.T) {
	dir := t.TempDir()
	if _, err := FindOVMF(dir); err == nil || !strings.Contains(err.Error(), "ovmf") {
		t.Errorf("empty dir: %v", err)
	}
	for _, n := range []string{"OVMF_CODE.fd", "OVMF_VARS.fd"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	if o, err := FindOVMF(dir); err != nil || filepath.Base(o.Code) != "OVMF_CODE.fd" {
		t.Errorf("%+v %v", o, err)
	}
	for _, n := range []string{"OVMF_CODE_4M.fd", "OVMF_VARS_4M.fd"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	if o, err := FindOVMF(dir); err != nil || filepath.Base(o.Vars) != "OVMF_VARS_4M.fd" {
		t.Errorf("the 4 MiB build first: %+v %v", o, err)
	}
}

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
