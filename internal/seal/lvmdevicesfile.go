package seal

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

var opLVMDevicesFile = Operation{
	ID:      "lvm-devices-file",
	Default: true,
	Summary: "remove /etc/lvm/devices/system.devices, which pins the template's disk IDs",
	Kept:    keptOne("the LVM devices file"),
	Doc: Doc{
		What: "removes `/etc/lvm/devices/system.devices`",
		Why:  "it lists the template's disks by WWID; a clone's LVM would not find its PVs",
	},
	Plan: planLVMDevicesFile,
}

func planLVMDevicesFile(ctx context.Context, p *Planner) ([]Action, error) {
	return p.removePaths(catalogue.Lookup(catalogue.LVMDevices).Files(), regular,
		"lists the template's disks by WWID/serial: a clone's disks differ and LVM would not find its PVs")
}
