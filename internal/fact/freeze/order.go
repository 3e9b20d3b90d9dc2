package freeze

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// Candidate is one mount qemu-ga's guest-fsfreeze-freeze will
// attempt, in the order it attempts them.
type Candidate struct {
	Mount mountinfo.Mount
	// Freezable is false for filesystem types the kernel cannot freeze
	// (no freeze_fs: vfat, iso9660, squashfs ...); qemu-ga ignores their
	// EOPNOTSUPP and the mount is not quiesced.
	Freezable bool
	// Duplicate is true when an earlier candidate already froze the same
	// device (bind mounts, btrfs subvolumes): FIFREEZE gives EBUSY and
	// qemu-ga moves on.
	Duplicate bool
}

// freezableTypes are filesystems with freeze support in the kernel
// (util-linux fsfreeze(8), plus gfs2/ocfs2/bcachefs which implement it).
var freezableTypes = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true, "f2fs": true, "jfs": true,
	"nilfs2": true, "reiserfs": true, "gfs2": true, "ocfs2": true, "bcachefs": true,
}

// Freezable reports whether FIFREEZE works on a filesystem of type fstype.
func Freezable(fstype string) bool { return freezableTypes[fstype] }

// Order emulates qemu-ga's build_fs_mount_list and freeze loop
// (qga/commands-linux.c): every mountinfo entry with a real device
// (major != 0, or btrfs whose source device can be resolved — devOK says
// whether it can) is a candidate, attempted in reverse mount order.
// Entries with major 0 (tmpfs, overlay, nfs, virtiofs) are never frozen.
func Order(ms []mountinfo.Mount, devOK func(mountinfo.Mount) bool) (frozen []Candidate, skipped []mountinfo.Mount) {
	var list []mountinfo.Mount
	for _, m := range ms {
		if m.Major == 0 && !(m.FSType == "btrfs" && devOK != nil && devOK(m)) {
			skipped = append(skipped, m)
			continue
		}
		list = append(list, m)
	}
	seen := map[[2]uint32]bool{}
	for i := len(list) - 1; i >= 0; i-- {
		m := list[i]
		key := [2]uint32{m.Major, m.Minor}
		c := Candidate{Mount: m, Freezable: Freezable(m.FSType)}
		if c.Freezable {
			c.Duplicate = seen[key]
			seen[key] = true
		}
		frozen = append(frozen, c)
	}
	return frozen, skipped
}

// LoopBacking returns the loop device name ("loop0") of a mount source
// such as "/dev/loop0", or "".
func LoopBacking(source string) string {
	n, ok := strings.CutPrefix(source, "/dev/")
	if !ok || !strings.HasPrefix(n, "loop") || len(n) == 4 {
		return ""
	}
	for _, c := range n[4:] {
		if c < '0' || c > '9' {
			return ""
		}
	}
	return n
}
