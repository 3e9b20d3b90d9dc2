package blockdev

import (
	"fmt"

	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// MountDevice is the block device behind a mount: by device number, or by
// source path for btrfs, whose mounts carry an anonymous device number.
// byPath resolves a /dev path; it is asked only when the number fails.
func MountDevice(inv *Inventory, m mountinfo.Mount, byPath func(string) (*BlockDevice, error)) *BlockDevice {
	if inv == nil {
		return nil
	}
	if m.Major != 0 {
		if d := inv.ByNumber(m.Major, m.Minor); d != nil {
			return d
		}
	}
	if len(m.Source) > 5 && m.Source[:5] == "/dev/" {
		if d, err := byPath(m.Source); err == nil {
			return d
		}
	}
	return nil
}

// IECBytes formats a size in IEC units with one decimal, as df -h does,
// so that fstab and disk-size name sizes alike.
func IECBytes(n int64) string {
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
