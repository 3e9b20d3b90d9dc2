package prove

// Platform is one way a platform copies a VM that has booted: what the
// copy keeps of its source (--copy PLATFORM). The table below is the one
// statement of these rules: prove boots copies by it, and docs/sealprep.md's
// platform table is generated from it (TestReferenceTables in
// cmd/sealprep).
type Platform struct {
	// Name is --copy's word.
	Name string
	// Title is how the platform's users know the operation.
	Title string
	// KeepsUUID: the copy has its source's firmware (SMBIOS system) UUID.
	KeepsUUID bool
	// KeepsMAC: the copy's NIC has its source's MAC.
	KeepsMAC bool
	// KeepsSeed: the copy gets its source's cloud-init seed as it was:
	// the same instance-id, hostname and network-config (on KubeVirt the
	// NoCloud instance-id is the firmware UUID, so it goes with it).
	// Otherwise the copy is a new instance with a seed for its new MAC.
	KeepsSeed bool
	// Source is where the rule is read from: the platform's code or docs.
	Source string
	// Fix is the step, in the platform's own terms, that makes a copy a
	// new instance (or says that the platform already does).
	Fix string
}

// Platforms are the copies --copy makes, in the order the docs list them.
var Platforms = []Platform{
	{Name: "harvester-clone", Title: `Harvester "Clone" (with volume data)`, KeepsUUID: true, KeepsSeed: true,
		Source: "harvester/harvester `pkg/api/vm/handler.go` getClonedVMYamlFromSourceVM: a deep copy of the source's spec (firmware UUID and cloud-init disk included), MACs cleared",
		Fix:    "before the copy first boots, give it a new firmware UUID (edit its YAML: spec.template.spec.domain.firmware.uuid; KubeVirt makes the NoCloud instance-id from it, so cloud-init then sees a new instance)"},
	{Name: "harvester-restore-new", Title: `Harvester "Restore New" from a backup`, KeepsUUID: true, KeepsSeed: true,
		Source: "harvester/harvester `pkg/controller/master/backup/restore.go` createNewVM and `pkg/restore/common/operator.go` SanitizeVMSpec: the spec is restored, MACs cleared unless keepMacAddress; harvester/docs PR #721 documents `dhcp-identifier: mac` for the IP that Restore New VMs keep (harvester #4474, #6402)",
		Fix:    "before the restored VM first boots, give it a new firmware UUID (edit its YAML: spec.template.spec.domain.firmware.uuid; KubeVirt makes the NoCloud instance-id from it, so cloud-init then sees a new instance)"},
	{Name: "kubevirt-restore", Title: "KubeVirt VirtualMachineRestore to a new VM", KeepsUUID: true, KeepsMAC: true, KeepsSeed: true,
		Source: "kubevirt/kubevirt `pkg/storage/snapshot/restore.go`: the new VM's spec comes from the snapshot (firmware UUID, MACs, cloud-init volumes) unless `spec.patches` change it",
		Fix:    "add spec.patches to the VirtualMachineRestore that replace the firmware UUID (/spec/template/spec/domain/firmware/uuid) and the MACs, so that cloud-init sees a new instance"},
	{Name: "kubevirt-clone", Title: "KubeVirt VirtualMachineClone", KeepsSeed: false,
		Source: "kubevirt/kubevirt `pkg/virt-controller/watch/clone/vm-target.go`: the firmware UUID is cleared (a new one, and with it a new NoCloud instance-id) and MACs unless `newMacAddresses` names them; the disks are copied as they are",
		Fix:    "a VirtualMachineClone already gives a new firmware UUID, MACs and cloud-init instance"},
	{Name: "proxmox-clone", Title: "Proxmox VE `qm clone`", KeepsSeed: false,
		Source: "pve-qemu-server `PVE/API2/Qemu.pm` clone_vm: new MACs and a new smbios1 uuid; the cloud-init drive is made anew, its instance-id a hash of the config that names the new MAC",
		Fix:    "`qm clone` already gives new MACs, a new smbios1 uuid and cloud-init instance"},
	{Name: "proxmox-restore", Title: "Proxmox VE restore (`qmrestore` without `--unique`)", KeepsUUID: true, KeepsMAC: true, KeepsSeed: true,
		Source: "pve-qemu-server `PVE/QemuServer.pm` restore_update_config_line: MACs and the smbios1 uuid are kept unless `unique` is set (the GUI's \"Unique\" box)",
		Fix:    "restore with `qmrestore --unique 1` (or tick \"Unique\"), which gives new MACs and a new smbios1 uuid, so that cloud-init sees a new instance"},
}

// PlatformNames are --copy's words.
func PlatformNames() []string {
	out := make([]string, len(Platforms))
	for i, p := range Platforms {
		out[i] = p.Name
	}
	return out
}

// PlatformByName finds a --copy word.
func PlatformByName(name string) (Platform, bool) {
	for _, p := range Platforms {
		if p.Name == name {
			return p, true
		}
	}
	return Platform{}, false
}

// kept lists what p keeps of the source, in Kept words.
func (p Platform) kept() []string {
	out := []string{}
	for _, k := range []struct {
		on   bool
		what string
	}{{p.KeepsUUID, KeptUUID}, {p.KeepsMAC, KeptMAC}, {p.KeepsSeed, KeptSeed}} {
		if k.on {
			out = append(out, k.what)
		}
	}
	return out
}

// What a copy keeps of its source (CopyResult.Kept).
const (
	KeptUUID = "firmware-uuid"
	KeptMAC  = "mac"
	KeptSeed = "seed"
)
