package appliance

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// writeCache puts what write writes at path, a file of dir, whole or not at all. It is
// written and synced first into a file with no name (O_TMPFILE), which
// is named only once whole (a temporary name, renamed over path at
// once), so that sealprep killed while it writes leaves nothing in the
// cache. Where dir's filesystem has no O_TMPFILE, the temporary file is
// named from the start.
func writeCache(dir, path string, write func(io.Writer) error) error {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return writeRenamed(dir, path, write)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".%s-%016x", filepath.Base(path), rand.Uint64()))
	if err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, tmp, unix.AT_SYMLINK_FOLLOW); err != nil {
		return writeRenamed(dir, path, write)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeRenamed writes what write writes to a named temporary file of dir, then renames
// it over path.
func writeRenamed(dir, path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if err = write(tmp); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
