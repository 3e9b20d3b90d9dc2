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
		Fix:     "Free space on {mount} (`du -xh --max-depth=2 --threshold=100M {mount}` lists the directories that hold it), or grow its disk and filesystem."}
	codeDiskUsageCritical = runner.Code{ID: "disk-usage-critical", Group: "Space and inodes", Status: "fail",
		Meaning: "Blocks used over `disk.fail_percent` (default 97 %).",
		Fix:     "Free space on {mount} now, since writes fail once it is full (`du -xh --max-depth=2 --threshold=100M {mount}` lists the directories that hold it), or grow its disk and filesystem."}
	codeDiskInodesHigh = runner.Code{ID: "disk-inodes-high", Group: "Space and inodes", Status: "warn",
		Meaning: "Inodes used over `disk.warn_percent`.",
		Fix:     "Delete unneeded small files on {mount} (`du --inodes -x --max-depth=2 --threshold=10000 {mount}` lists the directories that hold them), or recreate the filesystem with more inodes."}
	codeDiskInodesCrit = runner.Code{ID: "disk-inodes-critical", Group: "Space and inodes", Status: "fail",
		Meaning: "Inodes used over `disk.fail_percent`.",
		Fix:     "Delete unneeded small files on {mount} now, since no file can be created once every inode is used (`du --inodes -x --max-depth=2 --threshold=10000 {mount}` lists the directories that hold them), or recreate the filesystem with more inodes."}

	// Growth after a disk resize
	codeDiskFSNotGrown = runner.Code{ID: "disk-fs-not-grown", Group: "Growth after a disk resize", Status: "warn",
		Meaning: "The filesystem is smaller than its device by the margin above; detail `fs_size`, `device_size`, `unused` (and `_bytes`).",
		Fix:     "Grow the filesystem to fill {device} with {command}.",
		Cases: []runner.Case{{When: "for the root filesystem",
			Fix: "Grow the root filesystem to fill {device} with {command}; cloud-init's resizefs module does this at first boot, so look for `cc_resizefs` in `/var/log/cloud-init.log` to see why it did not."}}}
	codeDiskPartNotGrown = runner.Code{ID: "disk-partition-not-grown", Group: "Growth after a disk resize", Status: "warn",
		Meaning: "The filesystem's partition leaves that much of its disk unallocated after it; detail `disk`, `disk_size`, `unallocated_after_partition`.",
		Fix:     "Grow the partition with `growpart {disk} {partition}`, then grow its filesystem with {command}.",
		Cases: []runner.Case{{When: "for the root filesystem",
			Fix: "Grow the partition with `growpart {disk} {partition}`, then grow its filesystem with {command}; cloud-init's growpart module does this at first boot, so look for `cc_growpart` in `/var/log/cloud-init.log` to see why it did not."}}}
	codeDiskSizeUnverified = runner.Code{ID: "disk-size-unverified", Group: "Growth after a disk resize", Status: "skip",
		Meaning: "The growth comparison could not be made: the device's superblock could not be read (not root, or a policy forbids opening it), `/sys/class/block` is unreadable, or mountinfo lists nothing to check.",
		Fix:     "Run guestcheck as root, so that it can read the superblock of {device}; as root, look for an SELinux or AppArmor denial of opening it in the audit log.",
		Cases: []runner.Case{{When: "when the block devices cannot be listed",
			Fix: "Check that sysfs is mounted and `/sys/class/block` can be listed (`ls /sys/class/block`)."}}}

	// When the disks cannot be measured
	codeDiskNotLive = runner.Code{ID: "disk-not-live", Group: "When the disks cannot be measured", Status: "skip",
		Meaning: "`--root` is an image, not the running system."}
	codeDiskStatfsFailed = runner.Code{ID: "disk-statfs-failed", Group: "When the disks cannot be measured", Status: "error",
		Meaning: "`statfs` on the mount point failed or did not answer before the deadline.",
		Fix:     "Run `df -h {mount}` to see whether the filesystem answers; if it hangs or fails, look for I/O errors of its device in `journalctl -k`."}
	codeDiskStateUnreadable = runner.Code{ID: "disk-state-unreadable", Group: "When the disks cannot be measured", Status: "error",
		Meaning: "`/proc/self/mountinfo` cannot be read, or the deadline passed before every filesystem was checked.",
		Fix:     "Check that `/proc` is mounted and `/proc/self/mountinfo` can be read (`cat /proc/self/mountinfo`).",
		Cases: []runner.Case{{When: "when the deadline passed",
			Fix: "Raise `checks.disk-size.timeout` in the configuration file, or find the filesystem that answers slowly with `df -h`."}}}
)

// Codes lists every finding code Run reports, in the order of the
// reference page.
var Codes = []runner.Code{
	codeDiskUsageOK, codeDiskUsageHigh, codeDiskUsageCritical, codeDiskInodesHigh, codeDiskInodesCrit,
	codeDiskFSNotGrown, codeDiskPartNotGrown, codeDiskSizeUnverified,
	codeDiskNotLive, codeDiskStatfsFailed, codeDiskStateUnreadable,
}
