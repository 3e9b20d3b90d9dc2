package fs

import (
	"fmt"
	"math"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fitrim is FITRIM, _IOWR('X', 121, struct fstrim_range) (linux/fs.h).
const fitrim = 0xC0185879

type fstrimRange struct{ Start, Len, MinLen uint64 }

// Trim flushes the filesystem mounted at dir (syncfs, so that the blocks
// of files just removed are free) and discards its free blocks (FITRIM),
// as fstrim(8) does. It returns the bytes the kernel reports trimmed; a
// filesystem or device that cannot discard is an error wrapping
// unix.EOPNOTSUPP.
func Trim(dir string) (uint64, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("trim %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return 0, fmt.Errorf("trim %s: syncfs: %w", dir, err)
	}
	r := fstrimRange{Len: math.MaxUint64}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fitrim, uintptr(unsafe.Pointer(&r))); e != 0 {
		return 0, fmt.Errorf("trim %s: FITRIM: %w", dir, e)
	}
	return r.Len, nil
}
