# fish completion for guestcheck; generated from its option table.
function __guestcheck_list
	set -l pre (string match -r -- '^.*,' (commandline -ct))
	set -q pre[1]; or set pre ''
	printf '%s\n' $pre$argv
end
function __guestcheck_format_file
	set -l tok (commandline -ct)
	set -l pre (string match -r -- '^[^/:]*:' $tok)
	if test -n "$pre"
		__fish_complete_path (string replace -- $pre '' $tok) | string replace -r -- '^' $pre
	else
		printf '%s:\n' $argv
		__fish_complete_path $tok
	end
end
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a probe -d 'answer an exec readiness probe in one line (KubeVirt readinessProbe.exec)'
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a explain -d 'say what a finding code means, why it matters and how to fix it'
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a check-config -d 'validate a configuration file without running any check'
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a fleet -d 'survey the VMs on this host through their guest agents and find the identity clones share'
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a freeze-drill -d 'freeze and thaw named VMs through their guest agents, as a snapshot does, and never leave one frozen'
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a help -d 'show the help of guestcheck or of one of its commands'
complete -c guestcheck -f -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -a completion -d 'print the shell completion script for bash, zsh or fish'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l only -r -f -a '(__guestcheck_list cloud-init cloud-config hostname routes dns network-identity network-config qemu-guest-agent fs-freeze fstab disk-size hotplug ssh systemd time-sync)' -d 'Run only these checks: comma-separated check IDs (see --list)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l skip -r -f -a '(__guestcheck_list cloud-init cloud-config hostname routes dns network-identity network-config qemu-guest-agent fs-freeze fstab disk-size hotplug ssh systemd time-sync)' -d 'Do not run these checks'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l list -d 'List the checks (ID, title, what each verifies) and exit; with --format json, as JSON'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l root -r -a '(__fish_complete_directories)' -d 'Read guest files under DIR (a mounted image); checks that need the running kernel, netlink or systemd report skip'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l format -r -f -a 'text json prometheus nagios junit tap jsonl' -d 'Report format: text, json, prometheus, nagios, junit, tap, jsonl (default text)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l output -r -f -a '(__guestcheck_format_file text json prometheus nagios junit tap jsonl)' -d 'Also write the report to FILE, atomically (a temporary file in the same directory, then rename), making missing directories'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l exit-codes -r -f -a 'guestcheck nagios' -d 'guestcheck (default): the exit codes below; nagios: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, as monitoring plugins return them (independent of --format)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l service-name -r -f -d 'nagios format: the status line\'s first word (default GUESTCHECK)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l summary -d 'Print only the one-line summary on stdout (for units and consoles; the full reports go to --output files)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l config -r -F -d 'Configuration file; default /etc/guestcheck/guestcheck.yaml, which may be absent'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l timeout -r -f -d 'Bound the whole run, such as 90s or 2m (default from the configuration, else 60s)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l wait -r -f -d 'First wait up to DUR for cloud-init to finish; never waits when guestcheck itself runs inside cloud-init'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l exit-zero -d 'Exit 0 even on warnings or failures (for cloud-init runcmd); a report --output could not write still exits 1'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l freeze-test -r -a '(__fish_complete_directories)' -d 'Also freeze and thaw the filesystem mounted at MNT for real (root only; never /, guestcheck\'s own filesystem or --output\'s); a watchdog process always thaws it'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l color -r -f -a 'auto always never' -d 'Colour in the text report: auto (default: only on a terminal, never with NO_COLOR set or TERM=dumb), always or never'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l verbose -s v -d 'text and nagios formats: also show passing findings (text: with their evidence)'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l version -d 'Print the version, commit, build date, Go version and architecture, and exit; with --format json, as JSON'
complete -c guestcheck -n 'not __fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l help -s h -d 'Show this help'
complete -c guestcheck -n '__fish_seen_subcommand_from probe' -l config -r -F -d 'Configuration file; default /etc/guestcheck/guestcheck.yaml'
complete -c guestcheck -n '__fish_seen_subcommand_from probe' -l timeout -r -f -d 'Bound the probe (overrides probe.timeout)'
complete -c guestcheck -n '__fish_seen_subcommand_from probe explain check-config fleet freeze-drill help completion' -l help -s h -d 'Show this help'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l libvirt -r -f -d 'Survey the running domains of this libvirt URI (qemu:///system, or qemu+unix:///system?socket=PATH) through libvirt\'s agent passthrough; a domain without the org.qemu.guest_agent.0 channel, or whose agent is not connected, is unknown with that reason'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l agent-socket -r -F -d 'Survey the guest agent on this chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off bound to org.qemu.guest_agent.0); NAME defaults to the file\'s name without extension'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l proxmox -d 'Survey every Proxmox VM\'s agent socket, /var/run/qemu-server/VMID.qga, named by VMID (the default when no other source is named and the directory exists)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l kubevirt -d 'Survey every VirtualMachine of a KubeVirt (Harvester) cluster from its API alone, read-only (ClusterRole kubevirt.io:view), named NAMESPACE/NAME with the node it runs on: their firmware UUID and serial, MACs, hostname and guest agent are compared before boot and without guest access; the VMs are not surveyed in the guest'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l kubeconfig -r -F -d 'With --kubevirt: the kubeconfig (default the first existing file of $KUBECONFIG, else ~/.kube/config)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l context -r -f -d 'With --kubevirt: the kubeconfig\'s context (default its current-context)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l namespace -r -f -d 'With --kubevirt: survey only this namespace (default all namespaces, whatever the context\'s namespace)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l name -r -f -d 'Survey only VMs whose name matches GLOB (*, ? and [...])'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l guestcheck-path -r -f -d 'guestcheck\'s absolute path in the guests (default /usr/bin/guestcheck)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l only -r -f -a '(__guestcheck_list cloud-init cloud-config hostname routes dns network-identity network-config qemu-guest-agent fs-freeze fstab disk-size hotplug ssh systemd time-sync)' -d 'Run only these checks in the guests (guestcheck --only)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l skip -r -f -a '(__guestcheck_list cloud-init cloud-config hostname routes dns network-identity network-config qemu-guest-agent fs-freeze fstab disk-size hotplug ssh systemd time-sync)' -d 'Do not run these checks in the guests (guestcheck --skip)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l format -r -f -a 'text json junit prometheus' -d 'Output format: text (default), json (fleet findings and every VM\'s report, schema/fleet-v1.schema.json), junit (one testsuite per VM) or prometheus (a node_exporter textfile)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l output -r -f -a '(__guestcheck_format_file text json junit prometheus)' -d 'Also write the survey to FILE, atomically'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l host-name -r -f -d 'Name this host NAME in the survey (default its hostname); a merge tells hosts apart by it, and names the host that merged by it'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l merge -r -F -d 'Survey nothing: compare these hosts\' surveys (guestcheck fleet --format json on each) as one fleet; more FILEs may follow as arguments'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l shared-network -r -f -d 'With --merge: NAME (a libvirt network or bridge) is one network on every host, so addresses on it are compared across hosts; any other network is its host\'s own'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l concurrency -r -f -d 'Survey N VMs at a time (default 8)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l vm-timeout -r -f -d 'Bound each VM, from connecting to its agent to its decoded report (default 1m30s); guestcheck in the guest gets three quarters of it as its own --timeout'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l timeout -r -f -d 'Bound the whole survey (default 10m0s); VMs not surveyed by then are unknown'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l listen -r -f -d 'Serve Prometheus metrics of the last survey on ADDR (such as 127.0.0.1:9847) at /metrics, and /healthz, surveying again every --interval; one survey at a time, whatever the scrapes'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l interval -r -f -d 'With --listen: pause between surveys (default 5m0s)'
complete -c guestcheck -n '__fish_seen_subcommand_from fleet' -l freeze-drill-results -r -F -d 'With --listen: also serve the last freeze drill\'s series (guestcheck_freeze_drill_*, as its textfile has them) from FILE, the JSON result guestcheck freeze-drill --output json:FILE wrote from its own timer; read when it changes, checked against schema/freeze-drill-v1.schema.json'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l agent-socket -r -F -d 'Drill the VM whose guest agent is on this chardev socket (QEMU -chardev socket,path=PATH,server=on,wait=off bound to org.qemu.guest_agent.0); NAME defaults to the file\'s name without extension'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l libvirt -r -f -d 'Drill the running domains named by --name on this libvirt URI (qemu:///system), through libvirt\'s agent passthrough'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l proxmox -d 'Drill the Proxmox VMs named by --name (VMIDs), through their agent sockets /var/run/qemu-server/VMID.qga'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l name -r -f -d 'With --libvirt or --proxmox: drill this VM, by its exact name (a domain, a VMID)'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l deadline -r -f -d 'The platform\'s freeze deadline to judge the freeze against (default 1s, Harvester\'s default fsFreezeDeadline; KubeVirt\'s virt-freezer thaws after 5m)'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l vm-timeout -r -f -d 'Bound each VM\'s drill, a freeze that hangs included (default 2m0s); then its guard thaws it'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l guestcheck-path -r -f -d 'guestcheck\'s absolute path in the guests, for their own fs-freeze prediction (default /usr/bin/guestcheck)'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l hook-log -r -f -d 'The fsfreeze hook\'s log in the guests (default /var/log/qga-fsfreeze-hook.log)'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l format -r -f -a 'text json junit prometheus' -d 'Output format: text (default), json (schema/freeze-drill-v1.schema.json), junit (a test case per VM) or prometheus (a node_exporter textfile: each VM\'s last drill, status and durations)'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l output -r -f -a '(__guestcheck_format_file text json junit prometheus)' -d 'Also write the result to FILE, atomically'
complete -c guestcheck -n '__fish_seen_subcommand_from freeze-drill' -l host-name -r -f -d 'Name this host NAME in the result (default its hostname)'
