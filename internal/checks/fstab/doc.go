// Package fstab judges the fstab check: RunFstab reads /etc/fstab
// (parsed in internal/parse/fstab), the mount table and the block devices
// (internal/fact/blockdev, shared with disk-size) through runner.Env, and
// JudgeFstab decides from those facts alone. Guest files are read through
// fs.Root; nothing here writes to a guest file.
package fstab

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// Check checks /etc/fstab the way a disk reorder or a cloned disk would
// test it: kernel device names that change when disks are hot-plugged,
// identifiers that match no device or two, data disks whose absence would
// stop the boot, and entries that are not what is mounted.
// docs/checks/fstab.md explains each code.
var Check = runner.Check{
	ID:          "fstab",
	Title:       "fstab device naming and resolution",
	Description: "fstab names disks persistently, each entry resolves to exactly one device and is mounted, and no two disks share an identifier",
	Codes:       Codes,
	Run:         RunFstab,
}
