package fs

import (
	"errors"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a directory of a Root held open, for reading many entries below it
// without resolving the directory's own path again for each: a sysfs device
// directory (/sys/class/block/vda) is a symlink to a dozen components
// under /sys/devices, and a run reads a dozen attributes of every device.
//
// The directory itself is resolved like every guest path (inside the root,
// symlinks followed in-root). Names below it are resolved with openat2
// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS: no "..", absolute path or
// symlink of any kind, so nothing a Dir opens can be outside the directory,
// and so outside the root. Without openat2 (only the running system's "/"
// can be a Root then) a name is resolved from the root as Root.ReadFile
// resolves it. Like any open directory, a Dir stays the directory it
// opened if that is later renamed; it is for read-only views (Root), not
// for sealprep's Confined.
type Dir struct {
	r  *Root
	p  string // the directory's guest path, clean
	fd int    // O_PATH descriptor; -1 once closed
}

// OpenDir opens guest directory p for reading entries below it.
func (r *Root) OpenDir(p string) (*Dir, error) {
	fd, err := r.anchor.open(p, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: r.Display(p), Err: err}
	}
	return &Dir{r: r, p: Clean(p), fd: fd}, nil
}

// Close releases the directory's descriptor.
func (d *Dir) Close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// Path is the directory's guest path.
func (d *Dir) Path() string { return d.p }

// errBeneath is the error for a name that is not a plain relative path
// below the directory: the kernel would refuse it (EXDEV), and so do we,
// before it is asked.
var errBeneath = errors.New("not a relative path below the directory")

// openBeneath opens name, a relative path below d, with flags.
func (d *Dir) openBeneath(name string, flags int) (int, string, error) {
	gp := path.Join(d.p, name) // guest path, for messages
	if d.fd < 0 {
		return -1, gp, os.ErrClosed
	}
	if name == "" || strings.HasPrefix(name, "/") || slices.Contains(strings.Split(name, "/"), "..") {
		return -1, gp, errBeneath
	}
	if !d.r.anchor.openat2 {
		fd, err := d.r.anchor.open(gp, flags)
		return fd, gp, err
	}
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(d.fd, name, how)
		if (err == unix.EAGAIN || err == unix.EINTR) && i < 64 {
			continue
		}
		return fd, gp, err
	}
}

// ReadFile reads name, a relative path below the directory that passes
// through no symlink, as Root.ReadFile reads a guest path (same limit,
// same errors, named by the guest path). It is meant for small files
// (sysfs attributes, which all claim 4096 bytes): it does not fstat to
// size its buffer, a system call per attribute saved.
func (d *Dir) ReadFile(name string) ([]byte, error) {
	fd, gp, err := d.openBeneath(name, os.O_RDONLY)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.r.Display(gp), Err: err}
	}
	defer unix.Close(fd)
	return d.r.readFD(fd, gp, false)
}

// ReadDirNames lists the names in name ("." for the directory itself), a
// directory below d reached through no symlink, sorted. It reads the raw
// descriptor (no *os.File, no lstat of the entries): sysfs and /dev/disk
// listings want names only.
func (d *Dir) ReadDirNames(name string) ([]string, error) {
	fd, gp, err := d.openBeneath(name, os.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.r.Display(gp), Err: err}
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "readdirent", Path: d.r.Display(gp), Err: err}
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names) // drops "." and ".."
	}
	slices.Sort(names)
	return names, nil
}

// Readlink returns the target of the symlink name, one entry of the
// directory (no "/"), as stored: nothing is resolved.
func (d *Dir) Readlink(name string) (string, error) {
	gp := path.Join(d.p, name)
	if d.fd < 0 {
		return "", &os.PathError{Op: "readlink", Path: d.r.Display(gp), Err: os.ErrClosed}
	}
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return "", &os.PathError{Op: "readlink", Path: d.r.Display(gp), Err: errBeneath}
	}
	buf := make([]byte, 4096)
	for {
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", &os.PathError{Op: "readlink", Path: d.r.Display(gp), Err: err}
		}
		return string(buf[:n]), nil
	}
}
