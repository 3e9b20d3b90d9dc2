package prove

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockid"
)

// Partition types that decide how a disk boots.
const (
	gptESP      = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	gptBIOSBoot = "21686148-6449-6E6F-744E-656564454649"
	mbrESP      = "0XEF" // upper-cased as the switch compares
)

// FirmwareChoice is how a clone boots and why.
type FirmwareChoice struct {
	Firmware string
	Reason   string
}

// ChooseFirmware picks the firmware the image's own bootloader needs from
// its first sectors (head: at least the first 34 sectors of 512 bytes):
// BIOS when the disk has a BIOS boot partition or boot code in its MBR,
// UEFI when it has an EFI system partition and neither. want is the
// --firmware value; anything but auto is taken as given.
func ChooseFirmware(head []byte, want string) (FirmwareChoice, error) {
	if want == FirmwareBIOS || want == FirmwareUEFI {
		return FirmwareChoice{want, "--firmware " + want}, nil
	}
	pt, err := blockid.ReadPartitionTable(bytes.NewReader(head), 512)
	if errors.Is(err, blockid.ErrNoPartitionTable) {
		return FirmwareChoice{}, errors.New("the image has no partition table, so no bootloader: give --kernel and --initrd (and --append) to boot its filesystem directly")
	}
	if err != nil {
		return FirmwareChoice{}, fmt.Errorf("the image's partition table: %w", err)
	}
	var esp, biosBoot bool
	for _, p := range pt.Partitions {
		// blockid writes GPT type GUIDs in lower case.
		switch strings.ToUpper(p.Type) {
		case gptESP, mbrESP:
			esp = true
		case gptBIOSBoot:
			biosBoot = true
		}
	}
	bootCode := len(head) >= 440 && !allZero(head[:440])
	switch {
	case biosBoot:
		return FirmwareChoice{FirmwareBIOS, "the disk has a BIOS boot partition"}, nil
	case esp && !bootCode:
		return FirmwareChoice{FirmwareUEFI, "the disk has an EFI system partition and no BIOS boot code"}, nil
	case bootCode:
		return FirmwareChoice{FirmwareBIOS, "the disk's MBR holds boot code"}, nil
	}
	return FirmwareChoice{FirmwareBIOS, "no EFI system partition: BIOS, the default"}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// OVMF is the UEFI firmware pair: the code (read-only, shared) and the
// variable store template (copied per clone).
type OVMF struct{ Code, Vars string }

// FindOVMF finds Debian's ovmf files in dir, the 4 MiB build first.
func FindOVMF(dir string) (OVMF, error) {
	for _, p := range []OVMF{
		{"OVMF_CODE_4M.fd", "OVMF_VARS_4M.fd"},
		{"OVMF_CODE.fd", "OVMF_VARS.fd"},
	} {
		c, v := filepath.Join(dir, p.Code), filepath.Join(dir, p.Vars)
		if regular(c) && regular(v) {
			return OVMF{c, v}, nil
		}
	}
	return OVMF{}, fmt.Errorf("no OVMF firmware in %s: UEFI boots need the Debian package ovmf", dir)
}

func regular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
