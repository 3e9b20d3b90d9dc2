package main

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/host/prove"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// proveCommand is `sealprep prove`'s command line.
func proveCommand() *cli.Command {
	words := func(w ...string) func() []string { return func() []string { return w } }
	return &cli.Command{
		Name:        "prove",
		Summary:     "boot throwaway clones of a template image and prove that they come up healthy and distinct",
		Synopsis:    []string{"--image FILE [OPTIONS]"},
		Description: `Boot throwaway clones of a template (qcow2 overlays in a temporary directory: the template is never written, and a template in use is refused), each with its own NoCloud seed (instance-id, hostname), MAC and QEMU user network (restrict=on), a guest agent channel and a serial console captured to a file. Take each clone's boot verdict from guestcheck's report through the guest agent, or from guestcheck's summary line on the console when there is no agent; then compare machine-id (by hash), SSH host keys, DHCP client identity, MAC-pinned configuration, hostname, instance-id, MACs and addresses across the clones and against the template. Anything shared fails, naming the item, the clones and what to seal. Needs qemu-system-x86 and qemu-utils, and ovmf for UEFI images; reading the template's own identity needs root.`,
		Options: []cli.Option{
			{Long: "image", Arg: "FILE", Help: "The template: a raw or qcow2 disk image. It is only read.", Complete: cli.CompleteFile},
			{Long: "clones", Arg: "N", Help: "How many clones boot, in parallel (default 2, at most 16)."},
			{Long: "memory", Arg: "MIB", Help: "Memory per clone in MiB (default 1024)."},
			{Long: "cpus", Arg: "N", Help: "Virtual CPUs per clone (default 2)."},
			{Long: "firmware", Arg: "FW", Help: "auto (default: the image's own bootloader, BIOS, or UEFI through OVMF when the disk has only an EFI system partition), bios or uefi.", Complete: cli.CompleteWords, Words: words(prove.FirmwareAuto, prove.FirmwareBIOS, prove.FirmwareUEFI)},
			{Long: "firmware-uuid", Arg: "MODE", Help: "per-clone (default: each clone gets its own random SMBIOS system UUID, as a platform gives each new VM) or shared (one UUID for every clone, as Harvester's Clone and Restore New and KubeVirt's restore copy the source's; systemd fills an empty machine-id from it).", Complete: cli.CompleteWords, Words: words(prove.UUIDPerClone, prove.UUIDShared)},
			{Long: "kernel", Arg: "FILE", Help: "Boot this kernel directly, for a bare filesystem image without a bootloader.", Complete: cli.CompleteFile},
			{Long: "initrd", Arg: "FILE", Help: "The initrd for --kernel.", Complete: cli.CompleteFile},
			{Long: "append", Arg: "ARGS", Help: "The kernel command line for --kernel, such as 'root=/dev/vda rw console=ttyS0'."},
			{Long: "accel", Arg: "ACCEL", Help: "auto (default: KVM when /dev/kvm creates VMs and the CPU has hardware virtualization, else TCG), kvm or tcg.", Complete: cli.CompleteWords, Words: words(prove.AccelAuto, prove.AccelKVM, prove.AccelTCG)},
			{Long: "timeout", Arg: "DURATION", Help: "The whole run's deadline, boots and collection together (default 15m); QEMU is killed when it passes."},
			{Long: "reboot", Help: "After each clone's first verdict, reboot it through the guest agent and take a second verdict; fail when its machine-id, SSH host keys, hostname, DHCP client identity, instance-id or addresses changed across the reboot, or cloud-init ran its per-instance modules again."},
			{Long: "copy", Arg: "PLATFORM", Help: "After clone-1's verdict, power it off and boot a copy of its disk as PLATFORM copies a VM that has booted, keeping what that platform keeps of it (firmware UUID, MAC, cloud-init seed): " + strings.Join(prove.PlatformNames(), ", ") + ". Fail naming what the copy shares with its source (machine-id, SSH host keys, DHCP identity, hostname, instance-id, address) and whether its network came up on its own MAC, with the platform's fix. Repeatable; --clones defaults to 1.", Repeat: true, Complete: cli.CompleteWords, Words: prove.PlatformNames},
			{Long: "boot-budget", Arg: "DURATION", Help: "Fail a clone whose boot takes longer than DURATION from QEMU's start (or its reboot) to guestcheck's verdict, naming the slowest units of its boot's critical chain (default: no budget; every report shows the times)."},
			{Long: "user-data", Arg: "FILE", Help: "Cloud-init user-data for every clone's seed (default: an empty #cloud-config).", Complete: cli.CompleteFile},
			{Long: "network-config", Arg: "FILE", Help: "Cloud-init network-config for every clone's seed (default: the NIC by its MAC with a static address in the clone's network and a default route through QEMU's host, as cloud metadata gives it: QEMU's DHCP under restrict=on offers no router).", Complete: cli.CompleteFile},
			allowBacking,
			{Long: "keep", Arg: "DIR", Help: "Keep the overlays, seeds and consoles under DIR for debugging instead of removing them.", Complete: cli.CompleteDir},
			{Long: "format", Arg: "FMT", Help: "Report format: text (default), json (schema/prove-v1.schema.json) or junit (a test case per clone boot, per guestcheck check of each clone and per identity item).", Complete: cli.CompleteWords, Words: words("text", "json", "junit")},
			{Long: "junit", Arg: "FILE", Help: "Also write the JUnit report to FILE, for a Packer or CI step that shows the text.", Complete: cli.CompleteFile},
			{Long: "json", Arg: "FILE", Help: "Also write the JSON report to FILE (timings, peak memory, every identity item).", Complete: cli.CompleteFile},
			helpOption,
		},
	}
}
