package fstab

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/mounts"
	fstabfile "github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/parse/swaps"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// FstabFacts is everything the fstab check reads, gathered through Env
// before anything is judged, so that JudgeFstab does no I/O and can be
// tested on a value.
type FstabFacts struct {
	// File is /etc/fstab as the operator knows it (Root.Display).
	File string
	// Data is the file's bytes; ReadErr is why it could not be read
	// (iofs.ErrNotExist when there is no file).
	Data    []byte
	ReadErr error
	// Entries and Problems are Data parsed.
	Entries  []fstabfile.Entry
	Problems []problem.Problem
	// Live is true on the running system; NotLiveReason says why not.
	// Nothing below is read when it is false.
	Live          bool
	NotLiveReason string
	// IsRoot is true when guestcheck runs as root, and so can open devices.
	IsRoot bool
	// Mounts is the live mount table; MountsErr is why it could not be read.
	Mounts    []mountinfo.Mount
	MountsErr error
	// Swaps are the active swap areas; SwapsOK is false when /proc/swaps
	// could not be read.
	Swaps   []swaps.Area
	SwapsOK bool
	// blockdev.Inventory is the block devices; InventoryErr is why they could not
	// be listed (blockdev.Inventory is then nil).
	Inventory    *blockdev.Inventory
	InventoryErr error
	// Paths is what each /dev path named by an entry, a mount source or a
	// swap area resolved to. A path not listed resolves to nothing.
	Paths map[string]PathDevice
	// Missing lists the files named by file entries (swap files, loop
	// images) that do not exist.
	Missing map[string]bool
	// Deadline is set when the check's deadline passed while gathering:
	// the entries from index Cut on were not resolved, and are not judged.
	Deadline error
	Cut      int
}

// PathDevice is the block device a path resolves to, or why it does not.
type PathDevice struct {
	Device *blockdev.BlockDevice
	Err    error
}

// GatherFstab reads /etc/fstab and, on the live system, the mount table,
// the active swaps, the block-device inventory and every device path the
// judgement will ask about.
func GatherFstab(ctx context.Context, env *runner.Env) FstabFacts {
	f := FstabFacts{File: env.Root.Display(fstabPath), Live: env.Live, IsRoot: env.IsRoot,
		Paths: map[string]PathDevice{}, Missing: map[string]bool{}}
	f.Data, f.ReadErr = env.Root.ReadFile(fstabPath)
	if f.ReadErr != nil {
		return f
	}
	f.Entries, f.Problems = fstabfile.Parse(f.Data)
	if len(f.Entries) == 0 && len(f.Problems) == 0 {
		return f
	}
	if !env.Live {
		f.NotLiveReason = env.NotLiveReason()
	} else {
		f.gatherState(ctx, env)
	}
	for i, e := range f.Entries {
		if err := ctx.Err(); err != nil {
			f.Deadline, f.Cut = err, i
			break
		}
		f.gatherEntry(env, e)
	}
	return f
}

// gatherState reads mountinfo, swaps and the inventory, and resolves the
// mount sources and swap areas that name a device by path.
func (f *FstabFacts) gatherState(ctx context.Context, env *runner.Env) {
	f.Mounts, f.MountsErr = mounts.Table(env.Facts, env.Root)
	if b, err := env.Root.ReadFile("/proc/swaps"); err == nil {
		f.Swaps, _ = swaps.Parse(b)
		f.SwapsOK = true
	}
	f.Inventory, f.InventoryErr = blockdev.Devices(ctx, env.Facts, env.Root)
	if f.InventoryErr != nil {
		f.Inventory = nil
		return
	}
	for _, m := range f.Mounts {
		blockdev.MountDevice(f.Inventory, m, f.resolver(env))
	}
	for _, s := range f.Swaps {
		if strings.HasPrefix(s.Filename, "/dev/") {
			f.resolver(env)(s.Filename)
		}
	}
}

// gatherEntry resolves what one entry names, as the judgement will ask.
func (f *FstabFacts) gatherEntry(env *runner.Env, e fstabfile.Entry) {
	if f.Inventory == nil {
		return
	}
	src := fstabfile.ClassifySource(e)
	switch {
	case src.ID != "":
	case src.Kind == fstabfile.SourceDiskLink && f.Inventory.UdevLinks, src.Kind == fstabfile.SourceDevice:
		f.resolver(env)(src.Value)
	case src.Kind == fstabfile.SourceFile:
		if _, err := env.Root.Stat(src.Value); errors.Is(err, iofs.ErrNotExist) {
			f.Missing[src.Value] = true
		}
	}
}

// resolver resolves a path through env's root and records the answer.
func (f *FstabFacts) resolver(env *runner.Env) func(string) (*blockdev.BlockDevice, error) {
	return func(p string) (*blockdev.BlockDevice, error) {
		if r, ok := f.Paths[p]; ok {
			return r.Device, r.Err
		}
		d, err := f.Inventory.DeviceForPath(env.Root, p)
		f.Paths[p] = PathDevice{d, err}
		return d, err
	}
}

// device is what path p resolved to when the facts were gathered.
func (f *FstabFacts) device(p string) (*blockdev.BlockDevice, error) {
	if r, ok := f.Paths[p]; ok {
		return r.Device, r.Err
	}
	return nil, fmt.Errorf("%s: %w", p, iofs.ErrNotExist)
}
