package networkidentity

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/identity/appid"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// ProductUUIDPath is the SMBIOS system UUID the hypervisor gives the VM.
const ProductUUIDPath = identity.ProductUUIDPath

// ReadProductUUID returns the SMBIOS product UUID on the running system,
// or "" off it, when the file is missing, or when it cannot be read (it is
// readable by root only).
func ReadProductUUID(root *fs.Root, live bool) string {
	if !live {
		return ""
	}
	b, err := root.ReadFile(ProductUUIDPath)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// JudgeFirmwareMachineID warns when the machine-id is the VM's SMBIOS
// product UUID. KubeVirt derives that UUID from the VM's name, so a clone
// or restore under the same name, or a template booted with
// systemd.machine_id=firmware, shares the identity of every other VM with
// that UUID. Nothing is said when either value is unknown.
func JudgeFirmwareMachineID(machineID, productUUID string) []runner.Finding {
	mid := strings.ToLower(strings.TrimSpace(machineID))
	if !identity.ValidFormat(mid) {
		return nil
	}
	for i, form := range identity.FirmwareMachineIDs(productUUID) {
		if form != mid {
			continue
		}
		// Neither the ID nor the UUID it equals goes into the report:
		// machine-id(5) asks that the ID not be exposed; its hash is
		// the report's machine_id_hash, so that it still compares.
		h, _ := appid.MachineIDHash(mid)
		d := map[string]string{"file": MachineIDPath, "machine_id_hash": h, "product_uuid_file": ProductUUIDPath, "source": "firmware"}
		if i == 1 {
			d["byte_order"] = "first three fields swapped"
		}
		return []runner.Finding{CodeIDMachineIDFromFirmware.New(runner.Warn,
			"the machine-id equals the SMBIOS product UUID: clones and restores that keep the VM's name or UUID share this identity",
			d, CodeIDMachineIDFromFirmware.Fixf())}
	}
	return nil
}
