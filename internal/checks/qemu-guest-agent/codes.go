package guestagent

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Where the check applies
	CodeNotLive = runner.Code{ID: "qga-not-live", Group: "Where the check applies", Status: "skip",
		Meaning: "channel/unit/process not checked under `--root`",
		Fix: "run inside the VM"}
	CodeNotVM = runner.Code{ID: "qga-not-a-vm", Group: "Where the check applies", Status: "skip",
		Meaning: "no channel, and not a QEMU/KVM guest: bare metal, or another hypervisor (Firecracker, Hyper-V, VMware, Xen) where no guest-agent channel can exist; nothing else is judged. A QEMU/KVM guest is recognised by its DMI vendor or product (QEMU, KVM, KubeVirt, OpenStack, Red Hat, Bochs), shown in `platform`"}

	// The virtio-serial channel
	CodeChannelOK = runner.Code{ID: "qga-channel-ok", Group: "The virtio-serial channel", Status: "pass",
		Meaning: "the `org.qemu.guest_agent.0` port and its `/dev/virtio-ports` link exist"}
	CodeChannelMissing = runner.Code{ID: "qga-channel-missing", Group: "The virtio-serial channel", Status: "fail",
		Meaning: "the host can never reach an agent: every snapshot is crash-consistent. Detail carries the unit's state, the device it waits for and the running agents",
		Fix: "add the channel to the VM definition (see above); the unit then starts by itself"}
	CodeChannelLink = runner.Code{ID: "qga-channel-link-missing", Group: "The virtio-serial channel", Status: "fail (warn when a qemu-ga runs anyway)",
		Meaning: "the port exists but udev did not create `/dev/virtio-ports/…`, so the unit, bound to that device, never starts (was warn in every case before)",
		Fix: "`udevadm trigger --subsystem-match=virtio-ports`"}

	// The package
	CodeInstalled = runner.Code{ID: "qga-installed", Group: "The package", Status: "pass",
		Meaning: "binary found, version and CONFDIR reported"}
	CodeNotInstalled = runner.Code{ID: "qga-not-installed", Group: "The package", Status: "fail (skip when not a VM)",
		Meaning: "no agent: crash-consistent snapshots",
		Fix: "install `qemu-guest-agent`"}

	// The unit
	CodeNoSystemd = runner.Code{ID: "qga-no-systemd", Group: "The unit", Status: "skip",
		Meaning: "no systemd to ask; judged from `/proc`"}
	CodeUnitActive = runner.Code{ID: "qga-unit-active", Group: "The unit", Status: "pass",
		Meaning: "unit active"}
	CodeUnitInactive = runner.Code{ID: "qga-unit-inactive", Group: "The unit", Status: "fail",
		Meaning: "agent not running or not installed as a unit; never emitted for a unit that waits for the missing channel",
		Fix: "`systemctl start qemu-guest-agent`, read its journal; when the channel is missing, the channel first"}
	CodeUnitWaits = runner.Code{ID: "qga-unit-waits-for-channel", Group: "The unit", Status: "skip (warn when nothing starts the unit)",
		Meaning: "the unit is down because the channel's device does not exist (`waits_for`); `started_by` names what starts it when the channel appears (udev rule, enabled `WantedBy=` a device). The failure is the channel's",
		Fix: "the channel; when nothing starts the unit: `systemctl add-wants 'dev-virtio\\x2dports-org.qemu.guest_agent.0.device' qemu-guest-agent.service`"}
	CodeUnitMasked = runner.Code{ID: "qga-unit-masked", Group: "The unit", Status: "fail",
		Meaning: "it can never start",
		Fix: "`systemctl unmask`"}
	CodeUnitDisabled = runner.Code{ID: "qga-unit-disabled", Group: "The unit", Status: "warn",
		Meaning: "disabled and no udev rule starts it: the next boot has no agent",
		Fix: "`systemctl enable qemu-guest-agent`"}
	CodeRestartLoop = runner.Code{ID: "qga-restart-loop", Group: "The unit", Status: "warn",
		Meaning: "`NRestarts` ≥ 3: freezes may hit a restarting agent",
		Fix: "read `journalctl -u qemu-guest-agent`"}

	// The agent process
	CodeProcessOK = runner.Code{ID: "qga-process-holds-port", Group: "The agent process", Status: "pass",
		Meaning: "a qemu-ga holds the port open (what KubeVirt's `AgentConnected` reflects)"}
	CodeProcessMissing = runner.Code{ID: "qga-process-missing", Group: "The agent process", Status: "fail",
		Meaning: "nothing answers the host: crash-consistent snapshots; not emitted when the unit waits for the missing channel",
		Fix: "start the agent; when the channel is missing, the channel first"}
	CodeProcessNotOnPort = runner.Code{ID: "qga-process-not-on-port", Group: "The agent process", Status: "fail",
		Meaning: "running on another method/path",
		Fix: "remove `-m`/`-p` overrides"}

	// The configuration and its RPC filter
	CodeConfigInvalid = runner.Code{ID: "qga-config-invalid", Group: "The configuration and its RPC filter", Status: "fail",
		Meaning: "the agent exits at start with this configuration (unknown option for its version, both lists where refused, unparsable `qemu-ga.conf`)",
		Fix: "fix as `detail.errors` says"}
	CodeConfigIgnored = runner.Code{ID: "qga-config-ignored", Group: "The configuration and its RPC filter", Status: "warn",
		Meaning: "a filter setting sits where the agent does not read it (e.g. `BLOCK_RPCS` on a RHEL 9.4 unit that expands only `FILTER_RPC_ARGS`, `DAEMON_ARGS` under systemd, the other CONFDIR)",
		Fix: "move it, restart the agent"}
	CodeFilterOK = runner.Code{ID: "qga-rpc-filter-ok", Group: "The configuration and its RPC filter", Status: "pass",
		Meaning: "freeze and KubeVirt-required RPCs enabled; effective lists in detail"}
	CodeFreezeBlocked = runner.Code{ID: "qga-freeze-rpc-blocked", Group: "The configuration and its RPC filter", Status: "fail",
		Meaning: "a freeze RPC (`guest-fsfreeze-freeze`, `-freeze-list`, `-thaw`, `-status`, `guest-get-fsinfo`) is disabled: snapshots cannot be quiesced",
		Fix: "unblock it"}
	CodeKubeVirtBlocked = runner.Code{ID: "qga-kubevirt-rpc-blocked", Group: "The configuration and its RPC filter", Status: "fail",
		Meaning: "one of KubeVirt's 10 required RPCs is disabled or missing: VMI `AgentVersionNotSupported`",
		Fix: "unblock / upgrade"}
	CodeExecBlocked = runner.Code{ID: "qga-exec-blocked", Group: "The configuration and its RPC filter", Status: "pass (info), **fail** when the config has a `probe:` section",
		Meaning: "`guest-exec`/`guest-exec-status` disabled (RHEL 9.4+ leaves them out of the default allow-list); snapshots unaffected, but every KubeVirt exec probe fails, so with probes declared the VMI never becomes Ready",
		Fix: "allow both in the agent's filter and restart it, or remove `probe:` if no exec probe is used ([docs/probe.md](../probe.md))"}
	CodeFilterUnknown = runner.Code{ID: "qga-filter-unknown-rpc", Group: "The configuration and its RPC filter", Status: "warn",
		Meaning: "entries name no command (wildcards, spaces): they block/allow nothing",
		Fix: "list full names, no spaces"}

	// A freeze left behind
	CodeNotFrozen = runner.Code{ID: "qga-not-frozen", Group: "A freeze left behind", Status: "pass",
		Meaning: "no `qga.state.isfrozen` in the state dir"}
	CodeFrozenMarker = runner.Code{ID: "qga-frozen-marker", Group: "A freeze left behind", Status: "fail",
		Meaning: "the agent believes it is frozen and refuses most commands until thawed",
		Fix: "`virtctl unfreeze` / `virsh domfsthaw`, or remove the marker and restart"}
	CodeFrozenRecent = runner.Code{ID: "qga-frozen-marker-recent", Group: "A freeze left behind", Status: "warn",
		Meaning: "frozen less than 10 min ago by a running agent: a snapshot may be in progress",
		Fix: "thaw if none runs"}

	// Freeze hooks
	CodeHookOK = runner.Code{ID: "qga-hook-ok", Group: "Freeze hooks", Status: "pass",
		Meaning: "hook disabled with nothing waiting, or enabled and executable"}
	CodeHookMissing = runner.Code{ID: "qga-hook-missing", Group: "Freeze hooks", Status: "fail",
		Meaning: "`-F`/`fsfreeze-hook=` names a missing or non-executable hook: every freeze fails",
		Fix: "install it (`chmod 755`) or remove the option"}
	CodeHookScriptIgnored = runner.Code{ID: "qga-hook-script-ignored", Group: "Freeze hooks", Status: "warn",
		Meaning: "scripts in `fsfreeze-hook.d` that never run (not executable, backup suffix)",
		Fix: "fix or delete them"}
	CodeHookDisabled = runner.Code{ID: "qga-hook-disabled-scripts", Group: "Freeze hooks", Status: "warn",
		Meaning: "scripts wait in a hook directory but no hook is enabled (Debian default): applications are not quiesced",
		Fix: "enable `-F`"}

	// SELinux
	CodeSELinuxOK = runner.Code{ID: "qga-selinux-ok", Group: "SELinux", Status: "pass",
		Meaning: "not enforcing, or no recent qemu-ga denials"}
	CodeSELinuxDenied = runner.Code{ID: "qga-selinux-denied", Group: "SELinux", Status: "fail",
		Meaning: "recent (7 days) AVC denials for qemu-ga, path named: the freeze fails (\"Permission denied\")",
		Fix: "`audit2allow` module or fix labels/owner"}
	CodeSELinuxConfined = runner.Code{ID: "qga-selinux-hooks-confined", Group: "SELinux", Status: "warn",
		Meaning: "enforcing, hook scripts present, `virt_qemu_ga_run_unconfined` off: hooks run confined and fail",
		Fix: "`setsebool -P virt_qemu_ga_run_unconfined on`"}

	// When the state cannot be read
	CodeUnreadable = runner.Code{ID: "qga-state-unreadable", Group: "When the state cannot be read", Status: "error",
		Meaning: "systemd or a state file could not be read",
		Fix: "run as root"}
)
