package disksize

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/blockdev"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// Usage is a filesystem's space and inode counts from statfs(2).
type Usage struct {
	// BlockSize is the unit of Blocks, Free and Avail (f_frsize).
	BlockSize int64
	// Blocks is the size, Free the unused blocks, Avail those an
	// unprivileged user may still use (Free minus the root reserve).
	Blocks, Free, Avail uint64
	// Files and FilesFree count inodes; both are 0 on filesystems without
	// a fixed inode table (btrfs, vfat).
	Files, FilesFree uint64
	// Magic is f_type (unix.EXT4_SUPER_MAGIC, ...).
	Magic uint32
}

// Size is the filesystem's data size in bytes.
func (u Usage) Size() int64 { return int64(u.Blocks) * u.BlockSize }

// UsedBytes is the space in use.
func (u Usage) UsedBytes() int64 { return int64(u.Blocks-min(u.Free, u.Blocks)) * u.BlockSize }

// AvailBytes is the space left for unprivileged users.
func (u Usage) AvailBytes() int64 { return int64(u.Avail) * u.BlockSize }

// UsedPercent is df's Use%: used / (used + available), so that the root
// reserve counts as full, unrounded. ok is false for a zero-sized filesystem.
func (u Usage) UsedPercent() (pct float64, ok bool) {
	used := u.Blocks - min(u.Free, u.Blocks)
	if used+u.Avail == 0 {
		return 0, false
	}
	return 100 * float64(used) / float64(used+u.Avail), true
}

// InodePercent is the share of inodes in use; ok is false when the
// filesystem reports no inode count (btrfs, vfat).
func (u Usage) InodePercent() (pct float64, ok bool) {
	if u.Files == 0 {
		return 0, false
	}
	return 100 * float64(u.Files-min(u.FilesFree, u.Files)) / float64(u.Files), true
}

// Statfs calls statfs(2) on host path p. It returns when ctx ends even if
// the call is stuck (a dead network mount), abandoning the call.
func Statfs(ctx context.Context, p string) (Usage, error) { return statfsWith(ctx, unix.Statfs, p) }

// statfsWith is Statfs through call, which is unix.Statfs or the stand-in
// a test put in runner.Env.Statfs.
func statfsWith(ctx context.Context, call func(string, *unix.Statfs_t) error, p string) (Usage, error) {
	type result struct {
		u   Usage
		err error
	}
	ch := make(chan result, 1)
	go func() {
		var st unix.Statfs_t
		if err := call(p, &st); err != nil {
			ch <- result{err: fmt.Errorf("statfs %s: %w", p, err)}
			return
		}
		// Field types differ between architectures, hence the conversions.
		bs := int64(st.Frsize)
		if bs <= 0 {
			bs = int64(st.Bsize)
		}
		ch <- result{u: Usage{BlockSize: bs, Blocks: st.Blocks, Free: st.Bfree, Avail: st.Bavail,
			Files: uint64(st.Files), FilesFree: uint64(st.Ffree), Magic: uint32(st.Type)}}
	}()
	select {
	case r := <-ch:
		return r.u, r.err
	case <-ctx.Done():
		return Usage{}, fmt.Errorf("statfs %s: %w", p, ctx.Err())
	}
}

// readOnlyImageTypes are always 100% full by construction.
var readOnlyImageTypes = map[string]bool{"squashfs": true, "iso9660": true, "erofs": true, "cramfs": true, "udf": true}

// isBlockBacked reports whether a mount is a filesystem on a block device:
// a real major number, or (btrfs, whose st_dev is anonymous) a /dev source.
func isBlockBacked(m mountinfo.Mount) bool {
	if fstab.IsVirtualType(m.FSType) || fstab.IsNetworkType(m.FSType) {
		return false
	}
	return m.Major != 0 || strings.HasPrefix(m.Source, "/dev/")
}

// UsageFilesystems picks the mounts whose usage matters: block-backed
// filesystems plus whatever is mounted at "/" (an overlay or tmpfs root in
// a container still fills up), skipping pseudo filesystems, network
// filesystems (statfs could hang on them) and read-only images (always
// full). Each filesystem appears once, at its "/" mount or its first mount
// (bind mounts and btrfs subvolumes repeat it).
func UsageFilesystems(ms []mountinfo.Mount) []mountinfo.Mount {
	var out []mountinfo.Mount
	index := map[string]int{}
	for _, m := range ms {
		if readOnlyImageTypes[m.FSType] {
			continue
		}
		if m.MountPoint != "/" && !isBlockBacked(m) {
			continue
		}
		key := fmt.Sprintf("%d:%d", m.Major, m.Minor)
		if m.Major == 0 && strings.HasPrefix(m.Source, "/dev/") {
			key = "src:" + m.Source // btrfs subvolumes have one anonymous dev each
		}
		if i, ok := index[key]; ok {
			// Prefer the root mount, then the mount of the filesystem's top.
			if m.MountPoint == "/" || (out[i].MountPoint != "/" && out[i].Root != "/" && m.Root == "/") {
				out[i] = m
			}
			continue
		}
		index[key] = len(out)
		out = append(out, m)
	}
	return out
}

// pathsIn resolves /dev paths to inventory devices through root r.
func pathsIn(r *fs.Root, inv *blockdev.Inventory) func(string) (*blockdev.BlockDevice, error) {
	return func(p string) (*blockdev.BlockDevice, error) { return inv.DeviceForPath(r, p) }
}
