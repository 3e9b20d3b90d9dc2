package disk

import (
	"fmt"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/mountinfo"
)

// mountDevice is the block device behind a mount: by device number, or by
// source path for btrfs, whose mounts carry an anonymous device number.
func mountDevice(env *check.Env, inv *Inventory, m mountinfo.Mount) *BlockDevice {
	if inv == nil {
		return nil
	}
	if m.Major != 0 {
		if d := inv.ByNumber(m.Major, m.Minor); d != nil {
			return d
		}
	}
	if len(m.Source) > 5 && m.Source[:5] == "/dev/" {
		if d, err := inv.DeviceForPath(env.Root, m.Source); err == nil {
			return d
		}
	}
	return nil
}

// iecBytes formats a size in IEC units with one decimal, as df -h does.
func iecBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), 0
	for v >= unit && i < 6 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[i-1])
}

// ReadMountinfo reads and parses the live mount table through r.
func ReadMountinfo(r *fs.Root) ([]mountinfo.Mount, error) {
	b, err := r.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return mountinfo.ParseTable(b)
}
