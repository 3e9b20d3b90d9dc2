package seal

import "context"

var opLVMDevicesFile = Operation{
	ID:      "lvm-devices-file",
	Default: true,
	Summary: "remove /etc/lvm/devices/system.devices, which pins the template's disk IDs",
	Plan:    planLVMDevicesFile,
}

func planLVMDevicesFile(ctx context.Context, p *Planner) ([]Action, error) {
	return p.removePath("/etc/lvm/devices/system.devices", regular,
		"lists the template's disks by WWID/serial: a clone's disks differ and LVM would not find its PVs")
}
