package fsfreeze

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Whether an agent can freeze
	codeFreezeNotLive = runner.Code{ID: "fs-freeze-not-live", Group: "Whether an agent can freeze", Status: "skip",
		Meaning: "under `--root`",
		Fix: "run inside the VM"}
	codeFreezeNotQEMU = runner.Code{ID: "fs-freeze-not-qemu", Group: "Whether an agent can freeze", Status: "skip",
		Meaning: "not a QEMU/KVM guest and no guest-agent port: qemu-ga never freezes here (`detail.platform`)"}
	codeFreezeNoAgent = runner.Code{ID: "fs-freeze-no-agent", Group: "Whether an agent can freeze", Status: "fail",
		Meaning: "qemu-ga is not installed: no filesystem is frozen, every snapshot is crash-consistent",
		Fix: "install `qemu-guest-agent`"}
	codeFreezeNoChannel = runner.Code{ID: "fs-freeze-no-channel", Group: "Whether an agent can freeze", Status: "fail",
		Meaning: "no `org.qemu.guest_agent.0` channel: the host cannot reach an agent, nothing is frozen",
		Fix: "add the channel to the VM definition (see the `qemu-guest-agent` page)"}

	// The freeze list
	codeFreezeUnreadable = runner.Code{ID: "fs-freeze-mounts-unreadable", Group: "The freeze list", Status: "error",
		Meaning: "no mount table",
		Fix: "mount `/proc`"}
	codeFreezeListOK = runner.Code{ID: "fs-freeze-list-ok", Group: "The freeze list", Status: "pass",
		Meaning: "what qemu-ga will freeze, in order (`detail.freeze_order`); \"would freeze … once it can run\" when an agent or channel is missing"}
	codeFreezeRootUnfreez = runner.Code{ID: "fs-freeze-root-unfreezable", Group: "The freeze list", Status: "fail",
		Meaning: "`/` is not frozen (vfat/squashfs/overlay/tmpfs…): snapshots of the root disk are never quiesced",
		Fix: "use ext4, xfs or btrfs for `/`"}
	codeFreezeMountSkipped = runner.Code{ID: "fs-freeze-mount-skipped", Group: "The freeze list", Status: "pass (info)",
		Meaning: "a mount qemu-ga attempts but cannot freeze (e.g. the vfat ESP), or a btrfs mount it cannot resolve; it is crash-consistent in snapshots",
		Fix: "keep data that matters elsewhere"}
	codeFreezeLoopBacked = runner.Code{ID: "fs-freeze-loop-backed", Group: "The freeze list", Status: "warn",
		Meaning: "a loop filesystem whose image file lives on another frozen filesystem: if the order flips the freeze hangs the guest",
		Fix: "move the data to its own virtual disk"}

	// The freeze test (`--freeze-test`)
	codeFreezeTestOK = runner.Code{ID: "fs-freeze-test-ok", Group: "The freeze test (`--freeze-test`)", Status: "pass",
		Meaning: "froze and thawed; latencies in detail"}
	codeFreezeTestUnsupport = runner.Code{ID: "fs-freeze-test-unsupported", Group: "The freeze test (`--freeze-test`)", Status: "warn",
		Meaning: "`EOPNOTSUPP`: \"cannot freeze\" (tmpfs, vfat)",
		Fix: "use a freezable filesystem"}
	codeFreezeTestBusy = runner.Code{ID: "fs-freeze-test-busy", Group: "The freeze test (`--freeze-test`)", Status: "warn",
		Meaning: "`EBUSY`: already frozen by someone else",
		Fix: "`fsfreeze -u` when no snapshot runs"}
	codeFreezeTestFailed = runner.Code{ID: "fs-freeze-test-failed", Group: "The freeze test (`--freeze-test`)", Status: "fail",
		Meaning: "other errno (EACCES, EPERM…) or a freeze slower than the watchdog deadline: qemu-ga fails the same way",
		Fix: "fix the cause, rerun"}
	codeFreezeTestRefused = runner.Code{ID: "fs-freeze-test-refused", Group: "The freeze test (`--freeze-test`)", Status: "error",
		Meaning: "refused (`/`, own binary/output, not a mount point, not root, `--root`)",
		Fix: "choose a data mount point"}
)
