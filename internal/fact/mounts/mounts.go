// Package mounts reads the mount table of the system a guest root stands
// for, once, for every check that judges mounts (fstab, disk-size,
// fs-freeze): /proc/self/mountinfo through the root, parsed by
// internal/parse/mountinfo.
package mounts

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/store"
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

// tableKey keeps a run's mount table in its store, per reader.
type tableKey struct{ r fs.Reader }

// table is Read's answer kept whole, so that a run shares the error too.
type table struct {
	ms  []mountinfo.Mount
	err error
}

// Table is Read once per run: fstab, disk-size and fs-freeze judge the
// one table s keeps for r (read afresh when s is nil). The slice is
// shared and must not be modified.
func Table(s *store.Store, r fs.Reader) ([]mountinfo.Mount, error) {
	t := store.Memo(context.Background(), s, tableKey{r}, func(context.Context) table {
		ms, err := Read(r)
		return table{ms, err}
	})
	return t.ms, t.err
}

// FstabPath is the static mount table: the disk checks, the cloud-config
// check's mounts, the boot root mode and sealprep's image mounting read
// it by this one name.
const FstabPath = "/etc/fstab"
