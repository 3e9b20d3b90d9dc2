package main

import (
	"slices"

	"github.com/guestcheck/guestcheck/internal/host/drill"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// drillCommand is `guestcheck freeze-drill`'s description.
func drillCommand() *cli.Command {
	return &cli.Command{Name: "freeze-drill", Summary: "freeze and thaw named VMs through their guest agents, as a snapshot does, and never leave one frozen",
		Synopsis: []string{"--agent-socket [NAME=]PATH... [OPTIONS]", "--libvirt URI --name DOMAIN... [OPTIONS]", "--proxmox --name VMID... [OPTIONS]"},
		Description: `Freeze the filesystems of each VM named, through its QEMU guest agent, as a Harvester, KubeVirt or Proxmox snapshot does: guest-fsfreeze-freeze, guest-fsfreeze-status, guest-fsfreeze-thaw. Reports per VM the freeze call's time (its fsfreeze hook included), how long it stayed frozen and the thaw call's time; the filesystems frozen and guest-get-fsinfo before and after; the fsfreeze hook's scripts and results from its log (` + drill.DefaultHookLog + `, read through guest-file-read); and whether guestcheck's own fs-freeze check in the guest (through guest-exec) predicted the same filesystems. The verdict: fail when the freeze fails, a hook script fails, or the freeze takes longer than --deadline, the platform's.

This writes to guests: it freezes their filesystems for as long as the freeze and thaw take. It drills only the VMs named one by one (every --agent-socket, every --name with --libvirt or --proxmox; no patterns), one at a time, and refuses a VM whose agent reports it frozen already. A guard process in its own session, started before each freeze, thaws the VM if the drill dies (SIGKILL included) or overruns --vm-timeout, when it kills the drill first: the agent's socket takes one client at a time. guestcheck fleet never freezes. /usr/share/doc/guestcheck/freeze-drill.md describes the drill, its safety and the platforms' deadlines.`,
		Options: []cli.Option{
			{Long: "agent-socket", Arg: "[NAME=]PATH", Help: "Drill the VM whose guest agent is on this chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off bound to org.qemu.guest_agent.0); NAME defaults to the file's name without extension. Repeatable.", Repeat: true, Complete: cli.CompleteFile},
			{Long: "libvirt", Arg: "URI", Help: "Drill the running domains named by --name on this libvirt URI (" + fleet.LibvirtSystemURI + "), through libvirt's agent passthrough."},
			{Long: "proxmox", Help: "Drill the Proxmox VMs named by --name (VMIDs), through their agent sockets " + fleet.ProxmoxDir + "/VMID.qga."},
			{Long: "name", Arg: "NAME", Help: "With --libvirt or --proxmox: drill this VM, by its exact name (a domain, a VMID). Repeatable; required: the drill freezes no VM it is not named.", Repeat: true},
			{Long: "deadline", Arg: "DUR", Help: "The platform's freeze deadline to judge the freeze against (default " + drill.DefaultDeadline.String() + ", Harvester's default fsFreezeDeadline; KubeVirt's virt-freezer thaws after 5m)."},
			{Long: "vm-timeout", Arg: "DUR", Help: "Bound each VM's drill, a freeze that hangs included (default " + drill.DefaultVMTimeout.String() + "); then its guard thaws it."},
			{Long: "guestcheck-path", Arg: "PATH", Help: "guestcheck's absolute path in the guests, for their own fs-freeze prediction (default " + fleet.DefaultGuestcheckPath + ")."},
			{Long: "hook-log", Arg: "PATH", Help: "The fsfreeze hook's log in the guests (default " + drill.DefaultHookLog + ")."},
			{Long: "format", Arg: "FMT", Help: "Output format: text (default), json (schema/freeze-drill-v1.schema.json), junit (a test case per VM) or prometheus (a node_exporter textfile: each VM's last drill, status and durations).", Complete: cli.CompleteWords, Words: func() []string { return slices.Clone(drill.Formats) }},
			{Long: "output", Arg: "[FMT:]FILE", Help: "Also write the result to FILE, atomically. In FMT; without FMT:, in the format FILE's extension names (.txt text, .json json, .xml junit, .prom prometheus), else in --format's. Repeatable, one file each.", Repeat: true, Complete: cli.CompleteFormatFile, Words: func() []string { return drill.Formats }},
			{Long: "host-name", Arg: "NAME", Help: "Name this host NAME in the result (default its hostname)."},
			helpOption,
		},
		Sections: []cli.Section{{Title: "Exit codes", Body: `0 every VM froze and thawed within the deadline; 2 warnings (the guest's prediction disagrees with the drill) and nothing worse; 1 any VM failing or unknown (not reachable, freeze blocked by the agent's RPC filter, frozen already), a name no VM has, or a report that --output could not write; 3 usage error.`}},
		Examples: []cli.Example{
			{Command: "guestcheck freeze-drill --agent-socket web1=/run/qemu/web1.qga", Comment: "One plain QEMU VM, against Harvester's 1s default."},
			{Command: "guestcheck freeze-drill --libvirt qemu:///system --name db1 --deadline 10s --format json", Comment: "A libvirt domain, against a 10s deadline, as JSON."},
			{Command: "guestcheck freeze-drill --proxmox --name 101 --output prometheus:/var/lib/prometheus/node-exporter/freeze-drill.prom", Comment: "A Proxmox VM, from a timer, for node_exporter."},
		},
	}
}
