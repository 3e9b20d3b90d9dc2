// Package mounts reads the mount table of the system a guest root stands
// for, once, for every check that judges mounts (fstab, disk-size,
// fs-freeze): /proc/self/mountinfo through the root, parsed by
// internal/parse/mountinfo.
package mounts

import (
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// Path is the mount table guestcheck reads.
const Path = "/proc/self/mountinfo"

// Read returns the mount table, in the kernel's order. Lines that do not
// parse are an error, as the parser says.
func Read(r fs.Reader) ([]mountinfo.Mount, error) {
	b, err := r.ReadFile(Path)
	if err != nil {
		return nil, err
	}
	return mountinfo.ParseTable(b)
}

// FstabPath is the static mount table: the disk checks, the cloud-config
// check's mounts, the boot root mode and sealprep's image mounting read
// it by this one name.
const FstabPath = "/etc/fstab"
