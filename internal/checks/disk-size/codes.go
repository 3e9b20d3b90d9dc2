package disksize

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Space and inodes
	codeDiskUsageOK = runner.Code{ID: "disk-usage-ok", Group: "Space and inodes", Status: "pass",
		Meaning: "One per filesystem: usage below `disk.warn_percent` for blocks and inodes. The message gives df-style numbers; detail has sizes in human units and bytes, and the growth comparison when it was made."}
	codeDiskUsageHigh = runner.Code{ID: "disk-usage-high", Group: "Space and inodes", Status: "warn",
		Meaning: "Blocks used over `disk.warn_percent` (default 90 %).",
		Fix: "Free space (`du -xh --max-depth=2 MOUNT | sort -h | tail`) or grow the disk and the filesystem."}
	codeDiskUsageCritical = runner.Code{ID: "disk-usage-critical", Group: "Space and inodes", Status: "fail",
		Meaning: "Blocks used over `disk.fail_percent` (default 97 %).",
		Fix: "Same, urgently: writes fail once it is full."}
	codeDiskInodesHigh = runner.Code{ID: "disk-inodes-high", Group: "Space and inodes", Status: "warn",
		Meaning: "Inodes used over `disk.warn_percent`.",
		Fix: "Delete unneeded small files (`du --inodes -x --max-depth=2 MOUNT | sort -n | tail`), or recreate the filesystem with more inodes."}
	codeDiskInodesCrit = runner.Code{ID: "disk-inodes-critical", Group: "Space and inodes", Status: "fail",
		Meaning: "Inodes used over `disk.fail_percent`.",
		Fix: "Same."}

	// Growth after a disk resize
	codeDiskFSNotGrown = runner.Code{ID: "disk-fs-not-grown", Group: "Growth after a disk resize", Status: "warn",
		Meaning: "The filesystem is smaller than its device by the margin above; detail `fs_size`, `device_size`, `unused` (and `_bytes`).",
		Fix: "`resize2fs DEVICE` (ext), `xfs_growfs MOUNT` (xfs), `btrfs filesystem resize max MOUNT`; for `/`, look for `cc_resizefs` in `/var/log/cloud-init.log`."}
	codeDiskPartNotGrown = runner.Code{ID: "disk-partition-not-grown", Group: "Growth after a disk resize", Status: "warn",
		Meaning: "The filesystem's partition leaves that much of its disk unallocated after it; detail `disk`, `disk_size`, `unallocated_after_partition`.",
		Fix: "`growpart DISK N`, then grow the filesystem; for `/`, look for `cc_growpart` in `/var/log/cloud-init.log`."}
	codeDiskSizeUnverified = runner.Code{ID: "disk-size-unverified", Group: "Growth after a disk resize", Status: "skip",
		Meaning: "The growth comparison could not be made: the device's superblock could not be read (not root, or a policy forbids opening it), `/sys/class/block` is unreadable, or mountinfo lists nothing to check.",
		Fix: "Run as root."}

	// When the disks cannot be measured
	codeDiskNotLive = runner.Code{ID: "disk-not-live", Group: "When the disks cannot be measured", Status: "skip",
		Meaning: "`--root` is an image, not the running system."}
	codeDiskStatfsFailed = runner.Code{ID: "disk-statfs-failed", Group: "When the disks cannot be measured", Status: "error",
		Meaning: "`statfs` on the mount point failed or did not answer before the deadline.",
		Fix: "`df -h MOUNT` to see whether the filesystem answers."}
	codeDiskStateUnreadable = runner.Code{ID: "disk-state-unreadable", Group: "When the disks cannot be measured", Status: "error",
		Meaning: "`/proc/self/mountinfo` cannot be read, or the deadline passed before every filesystem was checked.",
		Fix: "Check that `/proc` is mounted; raise `checks.disk-size.timeout`."}
)
