package fsfreeze

import (
	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (
	// Whether an agent can freeze
	codeFreezeNotLive = runner.Code{ID: "fs-freeze-not-live", Group: "Whether an agent can freeze", Status: "skip",
		Meaning: "under `--root`",
		Fix:     "Run guestcheck inside the VM, without `--root`: the freeze list is built from the running kernel's mount table."}
	codeFreezeNotQEMU = runner.Code{ID: "fs-freeze-not-qemu", Group: "Whether an agent can freeze", Status: "skip",
		Meaning: "not a QEMU/KVM guest and no guest-agent port: qemu-ga never freezes here (`detail.platform`)"}
	codeFreezeNoAgent = runner.Code{ID: "fs-freeze-no-agent", Group: "Whether an agent can freeze", Status: "fail",
		Meaning: "qemu-ga is not installed: no filesystem is frozen, every snapshot is crash-consistent",
		Fix: "Install the qemu-guest-agent package in the image (`apt install qemu-guest-agent`, `dnf install qemu-guest-agent` or `zypper install qemu-guest-agent`); " +
			"until then snapshots and backups of this VM are crash-consistent for every filesystem."}
	codeFreezeNoChannel = runner.Code{ID: "fs-freeze-no-channel", Group: "Whether an agent can freeze", Status: "fail",
		Meaning: "no `org.qemu.guest_agent.0` channel: the host cannot reach an agent, nothing is frozen",
		Fix:     agent.ChannelFix + " Until then snapshots and backups of this VM are crash-consistent for every filesystem."}

	// The freeze list
	codeFreezeUnreadable = runner.Code{ID: "fs-freeze-mounts-unreadable", Group: "The freeze list", Status: "error",
		Meaning: "no mount table",
		Fix:     "Mount `/proc` (`mount -t proc proc /proc`) and run guestcheck again: qemu-ga builds its freeze list from `/proc/self/mountinfo`."}
	codeFreezeListOK = runner.Code{ID: "fs-freeze-list-ok", Group: "The freeze list", Status: "pass",
		Meaning: "what qemu-ga will freeze, in order (`detail.freeze_order`); \"would freeze … once it can run\" when an agent or channel is missing"}
	codeFreezeRootUnfreez = runner.Code{ID: "fs-freeze-root-unfreezable", Group: "The freeze list", Status: "fail",
		Meaning: "`/` is not frozen (vfat/squashfs/overlay/tmpfs…): snapshots of the root disk are never quiesced",
		Fix:     "Install the OS on a freezable filesystem (ext4, xfs or btrfs) on a virtual disk; until then snapshots and backups of this VM are crash-consistent for `/`."}
	codeFreezeMountSkipped = runner.Code{ID: "fs-freeze-mount-skipped", Group: "The freeze list", Status: "pass (info)",
		Meaning: "a mount qemu-ga attempts but cannot freeze (e.g. the vfat ESP), or a btrfs mount it cannot resolve; it is crash-consistent in snapshots",
		Fix:     "Keep data that must be consistent in snapshots off {mountpoint}, which qemu-ga does not freeze: put it on ext4, xfs or btrfs on a virtual disk."}
	codeFreezeLoopBacked = runner.Code{ID: "fs-freeze-loop-backed", Group: "The freeze list", Status: "warn",
		Meaning: "a loop filesystem whose image file lives on another frozen filesystem: if the order flips the freeze hangs the guest",
		Fix: "Move the data of {mountpoint} to its own virtual disk instead of a loop-mounted image file: " +
			"a snapshot freeze of nested filesystems can hang the guest when their order changes (a remount, a reboot)."}

	// The freeze test (`--freeze-test`)
	codeFreezeTestOK = runner.Code{ID: "fs-freeze-test-ok", Group: "The freeze test (`--freeze-test`)", Status: "pass",
		Meaning: "froze and thawed; latencies in detail"}
	codeFreezeTestUnsupport = runner.Code{ID: "fs-freeze-test-unsupported", Group: "The freeze test (`--freeze-test`)", Status: "warn",
		Meaning: "`EOPNOTSUPP`: \"cannot freeze\" (tmpfs, vfat)",
		Fix: "Put data that must be consistent in snapshots on ext4, xfs or btrfs: qemu-ga skips {mountpoint}, " +
			"so snapshots and backups of this VM are crash-consistent for it."}
	codeFreezeTestBusy = runner.Code{ID: "fs-freeze-test-busy", Group: "The freeze test (`--freeze-test`)", Status: "warn",
		Meaning: "`EBUSY`: already frozen by someone else",
		Fix: "Once no snapshot or backup runs, thaw the filesystem with `fsfreeze -u {mountpoint}`: " +
			"something else holds a freeze on it (a snapshot in progress, or a leftover `fsfreeze -f`)."}
	codeFreezeTestFailed = runner.Code{ID: "fs-freeze-test-failed", Group: "The freeze test (`--freeze-test`)", Status: "fail",
		Meaning: "other errno (EACCES, EPERM…) or a freeze slower than the watchdog deadline: qemu-ga fails the same way",
		Fix: "Fix what the error in the detail names (an SELinux denial, permissions, the filesystem's state), then run `guestcheck --freeze-test {mountpoint}` again: " +
			"qemu-ga hits the same error, aborts the freeze, and the snapshot retries until it fails.",
		Cases: []runner.Case{{When: "when the freeze outlasted the watchdog",
			Fix: "Reduce the write load or the dirty page limits (`vm.dirty_bytes`, `vm.dirty_background_bytes`) before snapshots, then run `guestcheck --freeze-test {mountpoint}` again: " +
				"a freeze flushes dirty data first, and one this slow risks KubeVirt's freeze timeout."}}}
	codeFreezeTestRefused = runner.Code{ID: "fs-freeze-test-refused", Group: "The freeze test (`--freeze-test`)", Status: "error",
		Meaning: "refused (`/`, own binary/output, not a mount point, not root, `--root`)",
		Fix:     "Pass `--freeze-test` the mount point of a data filesystem that is not `/` and holds neither guestcheck's binary nor its output.",
		Cases: []runner.Case{
			{When: "when run under --root", Fix: "Run `guestcheck --freeze-test {mountpoint}` inside the VM, without `--root`."},
			{When: "when not run as root", Fix: "Run `guestcheck --freeze-test {mountpoint}` as root: freezing a filesystem needs CAP_SYS_ADMIN."},
		}}
)

// Codes lists every finding code Run reports, in the order of the
// check's reference page.
var Codes = []runner.Code{
	codeFreezeNotLive, codeFreezeNotQEMU, codeFreezeNoAgent, codeFreezeNoChannel,
	codeFreezeUnreadable, codeFreezeListOK, codeFreezeRootUnfreez, codeFreezeMountSkipped, codeFreezeLoopBacked,
	codeFreezeTestOK, codeFreezeTestUnsupport, codeFreezeTestBusy, codeFreezeTestFailed, codeFreezeTestRefused,
}
