package checks

import (
	disksize "github.com/guestcheck/guestcheck/internal/checks/disk-size"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// DiskSize is the first-boot "df -h and lsblk" look of the Harvester
// runbook: the root filesystem (and every other block-backed one) must fill
// its partition and the partition its disk, as growpart and resize2fs or
// xfs_growfs should have made it, and no filesystem may be nearly full of
// blocks or inodes. The logic lives in internal/checks/disk-size;
// docs/checks/disk-size.md explains each code.
var DiskSize = runner.Check{
	ID:          "disk-size",
	Title:       "Disk growth and usage",
	Description: "filesystems fill their partitions and disks (growpart/resize ran) and are not nearly full of blocks or inodes",
	Codes:       disksize.DiskSizeCodes,
	Run:         disksize.RunDiskSize,
}
