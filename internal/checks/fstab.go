package checks

import (
	fstabcheck "github.com/guestcheck/guestcheck/internal/checks/fstab"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Fstab checks /etc/fstab the way a disk reorder or a cloned disk would
// test it: kernel device names that change when disks are hot-plugged,
// identifiers that match no device or two, data disks whose absence would
// stop the boot, and entries that are not what is mounted. The logic
// lives in internal/checks/fstab; docs/checks/fstab.md explains each code.
var Fstab = runner.Check{
	ID:          "fstab",
	Title:       "fstab device naming and resolution",
	Description: "fstab names disks persistently, each entry resolves to exactly one device and is mounted, and no two disks share an identifier",
	Codes:       fstabcheck.FstabCodes,
	Run:         fstabcheck.RunFstab,
}
