package main

import (
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/fleet/kubevirt"
	"github.com/guestcheck/guestcheck/internal/shared/cli"
)

// fleetCommand is `guestcheck fleet`'s description.
func fleetCommand(ids func() []string) *cli.Command {
	return &cli.Command{Name: "fleet", Summary: "survey the VMs on this host through their guest agents and find the identity clones share",
		Synopsis: []string{"[--libvirt URI] [--proxmox] [OPTIONS]", "--agent-socket [NAME=]PATH... [OPTIONS]", "--kubevirt [--kubeconfig PATH] [OPTIONS]", "--listen ADDR [--interval DUR] [OPTIONS]", "--merge FILE [FILE...] [--shared-network NAME] [OPTIONS]"},
		Description: `Run guestcheck in every VM on this host through its QEMU guest agent (guest-exec of ` + fleet.DefaultGuestcheckPath + ` --format json --exit-zero, arguments as a list, never a shell), and compare the identities their reports carry: a machine-id, SSH host key, DHCP client identity, hostname, instance-id, MAC or address (on one network) that two VMs share is a finding no single guest can see. Prints a table, worst VM first, the shared items with their fix, and a summary line.

It only reads: per VM it sends guest-ping, guest-info, guest-exec and guest-exec-status, and nothing that writes to or changes the guest. A VM it cannot survey is unknown, with the reason: no agent channel, agent not connected or not answering, guest-exec disabled by the agent's RPC filter, guestcheck not installed, permission denied (SELinux), a timeout, a report of an unknown schema version, output over the bound or not JSON.

Without a source option it surveys ` + fleet.LibvirtSystemURI + `'s running domains when its socket exists, and Proxmox's sockets (` + fleet.ProxmoxDir + `/VMID.qga) when that directory exists. --kubevirt reads a KubeVirt cluster's VMs from its API instead, without guest access. Chardev sockets need root (or the socket's group); libvirt's agent passthrough needs a read-write connection (root, the libvirt group, or polkit's org.libvirt.unix.manage). /usr/share/doc/guestcheck/fleet.md describes sources, outputs and access.

With --merge it surveys nothing: it compares the surveys of many hosts (each host's guestcheck fleet --format json, collected by Ansible, SSH or CI) as one fleet, since clones of one template run on many hosts. Each VM is then name@host, its host the one its survey names (--host-name there), or the file's name. A network is its host's own unless --shared-network names it.`,
		Options: []cli.Option{
			{Long: "libvirt", Arg: "URI", Help: "Survey the running domains of this libvirt URI (" + fleet.LibvirtSystemURI + ", or qemu+unix:///system?socket=PATH) through libvirt's agent passthrough; a domain without the org.qemu.guest_agent.0 channel, or whose agent is not connected, is unknown with that reason. The default when " + fleet.LibvirtSystemURI + "'s socket exists and no other source is named."},
			{Long: "agent-socket", Arg: "[NAME=]PATH", Help: "Survey the guest agent on this chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off bound to org.qemu.guest_agent.0); NAME defaults to the file's name without extension. Repeatable.", Repeat: true, Complete: cli.CompleteFile},
			{Long: "proxmox", Help: "Survey every Proxmox VM's agent socket, " + fleet.ProxmoxDir + "/VMID.qga, named by VMID (the default when no other source is named and the directory exists)."},
			{Long: "kubevirt", Help: "Survey every VirtualMachine of a KubeVirt (Harvester) cluster from its API alone, read-only (ClusterRole " + kubevirt.ViewRole + "), named NAMESPACE/NAME with the node it runs on: their firmware UUID and serial, MACs, hostname and guest agent are compared before boot and without guest access; the VMs are not surveyed in the guest."},
			{Long: "kubeconfig", Arg: "PATH", Help: "With --kubevirt: the kubeconfig (default the first existing file of $KUBECONFIG, else ~/.kube/config). Its user authenticates with a token, tokenFile or client certificate; exec and auth-provider plugins are refused.", Complete: cli.CompleteFile},
			{Long: "context", Arg: "NAME", Help: "With --kubevirt: the kubeconfig's context (default its current-context)."},
			{Long: "namespace", Arg: "NS", Help: "With --kubevirt: survey only this namespace (default all namespaces, whatever the context's namespace)."},
			{Long: "name", Arg: "GLOB", Help: "Survey only VMs whose name matches GLOB (*, ? and [...]). Repeatable: a VM matching any is surveyed.", Repeat: true},
			{Long: "guestcheck-path", Arg: "PATH", Help: "guestcheck's absolute path in the guests (default " + fleet.DefaultGuestcheckPath + ")."},
			{Long: "only", Arg: "IDS", Help: "Run only these checks in the guests (guestcheck --only).", Complete: cli.CompleteWords, Words: ids, ListWords: true},
			{Long: "skip", Arg: "IDS", Help: "Do not run these checks in the guests (guestcheck --skip).", Complete: cli.CompleteWords, Words: ids, ListWords: true},
			{Long: "format", Arg: "FMT", Help: "Output format: text (default), json (fleet findings and every VM's report, schema/fleet-v1.schema.json), junit (one testsuite per VM) or prometheus (a node_exporter textfile).", Complete: cli.CompleteWords, Words: fleetFormats},
			{Long: "output", Arg: "[FMT:]FILE", Help: "Also write the survey to FILE, atomically. In FMT; without FMT:, in the format FILE's extension names (.txt text, .json json, .xml junit, .prom prometheus), else in --format's. Repeatable, one file each; with --listen, after every survey.", Repeat: true, Complete: cli.CompleteFormatFile, Words: fleetFormats},
			{Long: "host-name", Arg: "NAME", Help: "Name this host NAME in the survey (default its hostname); a merge tells hosts apart by it, and names the host that merged by it."},
			{Long: "merge", Arg: "FILE", Help: "Survey nothing: compare these hosts' surveys (guestcheck fleet --format json on each) as one fleet; more FILEs may follow as arguments. Repeatable.", Repeat: true, Complete: cli.CompleteFile},
			{Long: "shared-network", Arg: "NAME", Help: "With --merge: NAME (a libvirt network or bridge) is one network on every host, so addresses on it are compared across hosts; any other network is its host's own. Repeatable.", Repeat: true},
			{Long: "concurrency", Arg: "N", Help: "Survey N VMs at a time (default 8)."},
			{Long: "vm-timeout", Arg: "DUR", Help: "Bound each VM, from connecting to its agent to its decoded report (default " + fleet.DefaultVMTimeout.String() + "); guestcheck in the guest gets three quarters of it as its own --timeout."},
			{Long: "timeout", Arg: "DUR", Help: "Bound the whole survey (default " + defaultFleetTimeout.String() + "); VMs not surveyed by then are unknown."},
			{Long: "listen", Arg: "ADDR", Help: "Serve Prometheus metrics of the last survey on ADDR (such as 127.0.0.1:9847) at /metrics, and /healthz, surveying again every --interval; one survey at a time, whatever the scrapes."},
			{Long: "interval", Arg: "DUR", Help: "With --listen: pause between surveys (default " + defaultFleetInterval.String() + ")."},
			{Long: "freeze-drill-results", Arg: "FILE", Help: "With --listen: also serve the last freeze drill's series (guestcheck_freeze_drill_*, as its textfile has them) from FILE, the JSON result guestcheck freeze-drill --output json:FILE wrote from its own timer; read when it changes, checked against schema/freeze-drill-v1.schema.json. fleet itself never freezes. A missing or invalid FILE serves guestcheck_freeze_drill_results_ok 0 and no drill series, and one log line.", Complete: cli.CompleteFile},
			helpOption,
		},
		Sections: []cli.Section{{Title: "Exit codes", Body: `0 every VM passed (or skipped); 2 warnings and nothing worse; 1 any VM failing, in error or unknown, identity two VMs share, a source that could not be read, a --merge file that is not a fleet survey or whose host another file has too, or a report that --output could not write; 3 usage error. With --listen: 0 after SIGINT or SIGTERM, 1 when ADDR cannot be listened on.`}},
		Examples: []cli.Example{
			{Command: "guestcheck fleet --agent-socket web1=/run/qemu/web1.qga --agent-socket /run/qemu/db1.qga", Comment: "Two plain QEMU VMs."},
			{Command: "guestcheck fleet --proxmox --name '1??' --format json", Comment: "Proxmox VMs 100 to 199, as JSON."},
			{Command: "guestcheck fleet --kubevirt --kubeconfig /etc/guestcheck/harvester.kubeconfig", Comment: "A Harvester cluster's VMs, from its API alone."},
			{Command: "guestcheck fleet --format prometheus --output /var/lib/prometheus/node-exporter/guestcheck-fleet.prom", Comment: "For node_exporter's textfile collector, from a timer."},
			{Command: "guestcheck fleet --listen 127.0.0.1:9847 --interval 10m", Comment: "For Prometheus to scrape."},
			{Command: "guestcheck fleet --listen 127.0.0.1:9847 --freeze-drill-results /var/lib/guestcheck/freeze-drill.json", Comment: "For Prometheus to scrape, with the last freeze drill's result (its timer runs guestcheck freeze-drill --output json:/var/lib/guestcheck/freeze-drill.json)."},
			{Command: "guestcheck fleet --merge surveys/*.json --shared-network br-vlan10", Comment: "Compare the surveys of many hosts, on whose bridge br-vlan10 addresses are compared too."},
		},
	}
}
