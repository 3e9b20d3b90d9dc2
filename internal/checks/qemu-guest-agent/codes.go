package qemuguestagent

import (
	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// The sentences the fixes share, written once so that the same advice is
// the same words in every finding.
const (
	// untilThen ends the fixes of what keeps snapshots from being
	// quiesced: what is at stake.
	untilThen = " Until then snapshots and backups of this VM are crash-consistent or fail to quiesce."
	// addChannel and triggerLink are the first step when the channel is
	// unusable, missing or without its /dev link: qemu-ga exits at once
	// without it, so starting the agent comes after.
	addChannel  = "Add " + theChannel
	triggerLink = "Have " + udevLink
	theChannel  = "the virtio-serial channel org.qemu.guest_agent.0 to the VM definition (on KubeVirt and Harvester, restart the VM so virt-launcher regenerates the domain)"
	udevLink    = "udev create /dev/virtio-ports/org.qemu.guest_agent.0 (`udevadm trigger --subsystem-match=virtio-ports`)"
	// Case names for the fixes that depend on which channel problem the
	// check found.
	whenNoChannel = "when the channel is missing"
	whenNoLink    = "when the channel's /dev link is missing"
)

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	// Where the check applies
	CodeNotLive = runner.Code{ID: "qga-not-live", Group: "Where the check applies", Status: "skip",
		Meaning: "channel/unit/process not checked under `--root`",
		Fix:     "Run guestcheck inside the VM, without `--root`, to check the virtio channel, the unit and the agent process."}
	CodeNotVM = runner.Code{ID: "qga-not-a-vm", Group: "Where the check applies", Status: "skip",
		Meaning: "no channel, and not a QEMU/KVM guest: bare metal, or another hypervisor (Firecracker, Hyper-V, VMware, Xen) where no guest-agent channel can exist; nothing else is judged. A QEMU/KVM guest is recognised by its DMI vendor or product (QEMU, KVM, KubeVirt, OpenStack, Red Hat, Bochs), shown in `platform`"}

	// The virtio-serial channel
	CodeChannelOK = runner.Code{ID: "qga-channel-ok", Group: "The virtio-serial channel", Status: "pass",
		Meaning: "the `org.qemu.guest_agent.0` port and its `/dev/virtio-ports` link exist"}
	CodeChannelMissing = runner.Code{ID: "qga-channel-missing", Group: "The virtio-serial channel", Status: "fail",
		Meaning: "the host can never reach an agent: every snapshot is crash-consistent. Detail carries the unit's state, the device it waits for and the running agents",
		Fix:     agent.ChannelFix + untilThen}
	CodeChannelLink = runner.Code{ID: "qga-channel-link-missing", Group: "The virtio-serial channel", Status: "fail (warn when a qemu-ga runs anyway)",
		Meaning: "the port exists but udev did not create `/dev/virtio-ports/…`, so the unit, bound to that device, never starts (was warn in every case before)",
		Fix: "Make sure udev runs with its 50-udev-default.rules, then run `udevadm trigger --subsystem-match=virtio-ports` so that it creates /dev/virtio-ports/org.qemu.guest_agent.0: " +
			"the agent opens that path by default and its unit waits for that device." + untilThen}

	// The package
	CodeInstalled = runner.Code{ID: "qga-installed", Group: "The package", Status: "pass",
		Meaning: "binary found, version and CONFDIR reported"}
	CodeNotInstalled = runner.Code{ID: "qga-not-installed", Group: "The package", Status: "fail (skip when not a VM)",
		Meaning: "no agent: crash-consistent snapshots",
		Fix: "Install the qemu-guest-agent package in the image (`apt install qemu-guest-agent`, `dnf install qemu-guest-agent` or `zypper install qemu-guest-agent`) and enable its service." +
			untilThen}

	// The unit
	CodeNoSystemd = runner.Code{ID: "qga-no-systemd", Group: "The unit", Status: "skip",
		Meaning: "no systemd to ask; judged from `/proc`"}
	CodeUnitActive = runner.Code{ID: "qga-unit-active", Group: "The unit", Status: "pass",
		Meaning: "unit active"}
	CodeUnitInactive = runner.Code{ID: "qga-unit-inactive", Group: "The unit", Status: "fail",
		Meaning: "agent not running or not installed as a unit; never emitted for a unit that waits for the missing channel",
		Fix:     "Start the agent with `systemctl start qemu-guest-agent.service` and read `journalctl -u qemu-guest-agent.service` for why it stopped." + untilThen,
		Cases: []runner.Case{
			{When: "when the unit is not installed", Fix: "Install the distribution's qemu-guest-agent package, which ships qemu-guest-agent.service." + untilThen},
			{When: whenNoChannel, Fix: addChannel + " first: qemu-ga exits at once without it. Then run `systemctl restart qemu-guest-agent.service`, " +
				"since this unit is not bound to the channel's device (no BindsTo=) and does not wait for it." + untilThen},
			{When: whenNoLink, Fix: triggerLink + " first: qemu-ga exits at once without it. Then run `systemctl restart qemu-guest-agent.service`, " +
				"since this unit is not bound to the channel's device (no BindsTo=) and does not wait for it." + untilThen},
		}}
	CodeUnitWaits = runner.Code{ID: "qga-unit-waits-for-channel", Group: "The unit", Status: "skip (warn when nothing starts the unit)",
		Meaning: "the unit is down because the channel's device does not exist (`waits_for`); `started_by` names what starts it when the channel appears (udev rule, enabled `WantedBy=` a device). The failure is the channel's",
		Fix: "Have systemd start the agent with its device: run `systemctl add-wants '{device}' qemu-guest-agent.service` (or reinstall the package's udev rule); " +
			"otherwise the agent stays down after the channel is added."}
	CodeUnitMasked = runner.Code{ID: "qga-unit-masked", Group: "The unit", Status: "fail",
		Meaning: "it can never start",
		Fix:     "Run `systemctl unmask qemu-guest-agent.service && systemctl start qemu-guest-agent.service`." + untilThen,
		Cases: []runner.Case{
			{When: whenNoChannel, Fix: "Run `systemctl unmask qemu-guest-agent.service`, then add " + theChannel + ": the unit starts with the channel." + untilThen},
			{When: whenNoLink, Fix: "Run `systemctl unmask qemu-guest-agent.service`, then have " + udevLink + ": the unit starts with the channel." + untilThen},
		}}
	CodeUnitDisabled = runner.Code{ID: "qga-unit-disabled", Group: "The unit", Status: "warn",
		Meaning: "disabled and no udev rule starts it: the next boot has no agent",
		Fix:     "Run `systemctl enable qemu-guest-agent.service` so that the agent starts at every boot; without it the next boot's snapshots are crash-consistent."}
	CodeRestartLoop = runner.Code{ID: "qga-restart-loop", Group: "The unit", Status: "warn",
		Meaning: "`NRestarts` ≥ 3: freezes may hit a restarting agent",
		Fix: "Read `journalctl -u qemu-guest-agent.service` for why the agent exits, and correct that: " +
			"while it restarts, a snapshot's freeze request can fail or hit a stale frozen state."}

	// The agent process
	CodeProcessOK = runner.Code{ID: "qga-process-holds-port", Group: "The agent process", Status: "pass",
		Meaning: "a qemu-ga holds the port open (what KubeVirt's `AgentConnected` reflects)"}
	CodeProcessMissing = runner.Code{ID: "qga-process-missing", Group: "The agent process", Status: "fail",
		Meaning: "nothing answers the host: crash-consistent snapshots; not emitted when the unit waits for the missing channel",
		Fix: "Start the agent (`systemctl start qemu-guest-agent.service`): KubeVirt's AgentConnected condition and every quiesced snapshot need it holding the virtio port." +
			untilThen,
		Cases: []runner.Case{
			{When: whenNoChannel, Fix: addChannel + " first: qemu-ga exits at once without it. Then start the agent if its unit does not start by itself with the channel." + untilThen},
			{When: whenNoLink, Fix: triggerLink + " first: qemu-ga exits at once without it. Then start the agent if its unit does not start by itself with the channel." + untilThen},
		}}
	CodeProcessNotOnPort = runner.Code{ID: "qga-process-not-on-port", Group: "The agent process", Status: "fail",
		Meaning: "running on another method/path",
		Fix: "Run the agent with its default method, virtio-serial on /dev/virtio-ports/org.qemu.guest_agent.0: remove `-m`/`-p` overrides from its command line and configuration, and restart it." +
			untilThen}

	// The configuration and its RPC filter
	CodeConfigInvalid = runner.Code{ID: "qga-config-invalid", Group: "The configuration and its RPC filter", Status: "fail",
		Meaning: "the agent exits at start with this configuration (unknown option for its version, both lists where refused, unparsable `qemu-ga.conf`)",
		Fix:     "Correct what qemu-ga refuses in its configuration ({error}), then restart the agent: it exits at start-up with this configuration." + untilThen,
		RootFix: "Correct what qemu-ga refuses in its configuration in the image ({error}): it exits at start-up with this configuration." + untilThen}
	CodeConfigIgnored = runner.Code{ID: "qga-config-ignored", Group: "The configuration and its RPC filter", Status: "warn",
		Meaning: "a filter setting sits where the agent does not read it (e.g. `BLOCK_RPCS` on a RHEL 9.4 unit that expands only `FILTER_RPC_ARGS`, `DAEMON_ARGS` under systemd, the other CONFDIR)",
		Fix: "Move {setting} from {file} to where the agent reads it (a variable its unit's ExecStart= expands, or {conf}), then restart the agent: " +
			"until then the filter you meant for snapshot RPCs is not in force.",
		RootFix: "Move {setting} in the image from {file} to where the agent reads it (a variable its unit's ExecStart= expands, or {conf}): " +
			"until then the filter you meant for snapshot RPCs is not in force.",
		Cases: []runner.Case{
			{When: "when a whole file is not read", Fix: "Move the settings of {file} into {conf}, the configuration file this build of the agent reads, then restart the agent: " +
				"until then the filter you meant for snapshot RPCs is not in force."},
			{When: "when a whole file in an image is not read", Fix: "Move the settings of {file} into {conf} in the image, the configuration file this build of the agent reads: " +
				"until then the filter you meant for snapshot RPCs is not in force."},
		}}
	CodeFilterOK = runner.Code{ID: "qga-rpc-filter-ok", Group: "The configuration and its RPC filter", Status: "pass",
		Meaning: "freeze and KubeVirt-required RPCs enabled; effective lists in detail"}
	CodeFreezeBlocked = runner.Code{ID: "qga-freeze-rpc-blocked", Group: "The configuration and its RPC filter", Status: "fail",
		Meaning: "a freeze RPC (`guest-fsfreeze-freeze`, `-freeze-list`, `-thaw`, `-status`, `guest-get-fsinfo`) is disabled: snapshots cannot be quiesced",
		Fix: "Remove {rpcs} from the agent's block-list, or add them to its allow-list, where its settings come from ({settings_from}), then restart the agent." +
			untilThen,
		RootFix: "Remove {rpcs} from the agent's block-list in the image, or add them to its allow-list, where its settings come from ({settings_from})." + untilThen}
	CodeKubeVirtBlocked = runner.Code{ID: "qga-kubevirt-rpc-blocked", Group: "The configuration and its RPC filter", Status: "fail",
		Meaning: "one of KubeVirt's 10 required RPCs is disabled or missing: VMI `AgentVersionNotSupported`",
		Fix: "Enable {rpcs} in the agent's RPC filter, where its settings come from ({settings_from}), or upgrade an agent that lacks them, then restart the agent: " +
			"until then KubeVirt marks the agent AgentVersionNotSupported and Harvester shows no guest information.",
		RootFix: "Enable {rpcs} in the agent's RPC filter in the image, where its settings come from ({settings_from}), or install an agent that has them: " +
			"until then KubeVirt marks the agent AgentVersionNotSupported and Harvester shows no guest information."}
	CodeExecBlocked = runner.Code{ID: "qga-exec-blocked", Group: "The configuration and its RPC filter", Status: "pass (info), **fail** when the config has a `probe:` section",
		Meaning: "`guest-exec`/`guest-exec-status` disabled (RHEL 9.4+ leaves them out of the default allow-list); snapshots unaffected, but every KubeVirt exec probe fails, so with probes declared the VMI never becomes Ready",
		Fix: "Remove {rpcs} from the agent's block-list, or add them to its allow-list, where its settings come from ({settings_from}), and restart the agent; " +
			"or, if no exec probe is used, remove the `probe:` section from the guestcheck configuration ({probe_where}). " +
			"KubeVirt runs readinessProbe.exec and livenessProbe.exec through guest-exec: until then every such probe fails and the VMI never becomes Ready, or is restarted.",
		RootFix: "Remove {rpcs} from the agent's block-list in the image, or add them to its allow-list, where its settings come from ({settings_from}); " +
			"or, if no exec probe is used, remove the `probe:` section from the guestcheck configuration ({probe_where}). " +
			"KubeVirt runs readinessProbe.exec and livenessProbe.exec through guest-exec: until then every such probe fails and the VMI never becomes Ready, or is restarted."}
	CodeFilterUnknown = runner.Code{ID: "qga-filter-unknown-rpc", Group: "The configuration and its RPC filter", Status: "warn",
		Meaning: "entries name no command (wildcards, spaces): they block/allow nothing",
		Fix: "Name every command of the agent's block-list in full, without wildcards or a space after a comma (guest-file-open,guest-file-close rather than guest-file-*), instead of {names}: " +
			"qemu-ga compares names exactly, so an unknown name blocks nothing.",
		Cases: []runner.Case{{When: "in an allow-list",
			Fix: "Name every command of the agent's allow-list in full, without wildcards or a space after a comma (guest-file-open,guest-file-close rather than guest-file-*), instead of {names}: " +
				"qemu-ga compares names exactly, so an unknown name allows nothing."}}}

	// A freeze left behind
	CodeNotFrozen = runner.Code{ID: "qga-not-frozen", Group: "A freeze left behind", Status: "pass",
		Meaning: "no `qga.state.isfrozen` in the state dir"}
	CodeFrozenMarker = runner.Code{ID: "qga-frozen-marker", Group: "A freeze left behind", Status: "fail",
		Meaning: "the agent believes it is frozen and refuses most commands until thawed",
		Fix:     "Thaw the VM from the host (`virtctl unfreeze`, `virsh domfsthaw`), or, if nothing is frozen, remove {marker} and restart the agent." + untilThen,
		RootFix: "Remove {marker} from the image: every clone's agent would start refusing commands." + untilThen}
	CodeFrozenRecent = runner.Code{ID: "qga-frozen-marker-recent", Group: "A freeze left behind", Status: "warn",
		Meaning: "frozen less than 10 min ago by a running agent: a snapshot may be in progress",
		Fix: "If no snapshot or backup is running, thaw the VM from the host with `virsh domfsthaw` or `virtctl unfreeze`: " +
			"a VM left frozen stalls every write, and the next snapshot's freeze fails.",
		RootFix: "Remove {marker} from the image, or capture the image again from a thawed VM: it was captured with the agent's frozen marker."}

	// Freeze hooks
	CodeHookOK = runner.Code{ID: "qga-hook-ok", Group: "Freeze hooks", Status: "pass",
		Meaning: "hook disabled with nothing waiting, or enabled and executable"}
	CodeHookMissing = runner.Code{ID: "qga-hook-missing", Group: "Freeze hooks", Status: "fail",
		Meaning: "`-F`/`fsfreeze-hook=` names a missing or non-executable hook: every freeze fails",
		Fix: "Install the freeze hook {hook} with mode 755, or remove `-F`/`fsfreeze-hook=` from the agent's configuration, then restart the agent: " +
			"qemu-ga fails every freeze when its hook cannot be executed." + untilThen,
		RootFix: "Install the freeze hook {hook} in the image with mode 755, or remove `-F`/`fsfreeze-hook=` from the agent's configuration there: " +
			"qemu-ga fails every freeze when its hook cannot be executed." + untilThen}
	CodeHookScriptIgnored = runner.Code{ID: "qga-hook-script-ignored", Group: "Freeze hooks", Status: "warn",
		Meaning: "scripts in `fsfreeze-hook.d` that never run (not executable, backup suffix)",
		Fix: "Make the hook scripts {scripts} executable (`chmod 755`) and drop their backup suffixes, or delete them: " +
			"the hook skips them silently, so the application they should quiesce is snapshotted mid-write."}
	CodeHookDisabled = runner.Code{ID: "qga-hook-disabled-scripts", Group: "Freeze hooks", Status: "warn",
		Meaning: "scripts wait in a hook directory but no hook is enabled (Debian default): applications are not quiesced",
		Fix: "Enable the freeze hook with `-F` (or `fsfreeze-hook=` in {conf}) and restart the agent: " +
			"until then the scripts {scripts} never run and applications are not quiesced before snapshots.",
		RootFix: "Enable the freeze hook in the image with `-F` (or `fsfreeze-hook=` in {conf}): " +
			"until then the scripts {scripts} never run and applications are not quiesced before snapshots."}

	// SELinux
	CodeSELinuxOK = runner.Code{ID: "qga-selinux-ok", Group: "SELinux", Status: "pass",
		Meaning: "not enforcing, or no recent qemu-ga denials"}
	CodeSELinuxDenied = runner.Code{ID: "qga-selinux-denied", Group: "SELinux", Status: "fail",
		Meaning: "recent (7 days) AVC denials for qemu-ga, path named: the freeze fails (\"Permission denied\")",
		Fix: "Allow the access (`ausearch -c qemu-ga --raw > qga.avc && audit2allow -i qga.avc -M qga-local && semodule -i qga-local.pp`, or fix the label and owner of {path}), " +
			"then retry a freeze with `virsh domfsfreeze`." + untilThen,
		RootFix: "Allow the access in the image's build (an SELinux module made from the denials in its audit log, or the label and owner of {path}), " +
			"then retry a freeze on a booted clone with `virsh domfsfreeze`." + untilThen}
	CodeSELinuxConfined = runner.Code{ID: "qga-selinux-hooks-confined", Group: "SELinux", Status: "warn",
		Meaning: "enforcing, hook scripts present, `virt_qemu_ga_run_unconfined` off: hooks run confined and fail",
		Fix: "Run `setsebool -P virt_qemu_ga_run_unconfined on` so that hook scripts (database flushes) may do their work: " +
			"confined, they fail, and snapshots are only filesystem-consistent."}

	// When the state cannot be read
	CodeUnreadable = runner.Code{ID: "qga-state-unreadable", Group: "When the state cannot be read", Status: "error",
		Meaning: "systemd or a state file could not be read",
		Fix:     "Check that the system bus or systemd's private socket is reachable (`systemctl status qemu-guest-agent.service` must answer), then run guestcheck again.",
		Cases: []runner.Case{
			{When: "when systemd refuses a user that is not root", Fix: "Run guestcheck as root, and check that the system bus or systemd's private socket is reachable " +
				"(`systemctl status qemu-guest-agent.service` must answer)."},
			{When: "when the deadline passed", Fix: "Raise `checks.qemu-guest-agent.timeout` in the configuration file, then run guestcheck again."},
			{When: "when a user may not read the frozen marker", Fix: "Run guestcheck as root, or make {path} readable."},
			runner.RootDenied("{path}"),
			{When: "when the frozen marker cannot be read", Fix: "Repair or restore the state directory that holds {path}: the frozen marker in it could not be read."},
		}}
)

// Codes lists every code Run can emit, in the order of the check's
// reference page.
var Codes = []runner.Code{
	CodeNotLive, CodeNotVM,
	CodeChannelOK, CodeChannelMissing, CodeChannelLink,
	CodeInstalled, CodeNotInstalled,
	CodeNoSystemd, CodeUnitActive, CodeUnitInactive, CodeUnitWaits, CodeUnitMasked, CodeUnitDisabled, CodeRestartLoop,
	CodeProcessOK, CodeProcessMissing, CodeProcessNotOnPort,
	CodeConfigInvalid, CodeConfigIgnored, CodeFilterOK, CodeFreezeBlocked, CodeKubeVirtBlocked, CodeExecBlocked, CodeFilterUnknown,
	CodeNotFrozen, CodeFrozenMarker, CodeFrozenRecent,
	CodeHookOK, CodeHookMissing, CodeHookScriptIgnored, CodeHookDisabled,
	CodeSELinuxOK, CodeSELinuxDenied, CodeSELinuxConfined,
	CodeUnreadable,
}
