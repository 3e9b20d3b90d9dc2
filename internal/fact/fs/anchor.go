package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// RootProblem is why Open or OpenConfined could not open a root
// directory, in the user's words and without the path, which the caller
// names once ("--root /x: no such directory").
func RootProblem(err error) string {
	var pe *os.PathError
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return "no such directory"
	case errors.Is(err, syscall.ENOTDIR) || strings.HasSuffix(err.Error(), ": not a directory"):
		return "not a directory"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// anchor is a root directory held open by descriptor, and the one place
// guest paths inside it are resolved, for Root and Confined alike:
// openat2 with RESOLVE_IN_ROOT (absolute symlinks re-rooted, ".." clamped)
// and without magic links. A kernel without openat2 can anchor only the
// running system's own "/", where ordinary resolution is already confined.
type anchor struct {
	dir     string // absolute host path
	fd      int    // O_PATH descriptor of dir; -1 once closed
	host    bool   // dir is the running system's "/" (same device and inode)
	openat2 bool
}

func openAnchor(dir string) (anchor, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return anchor{}, fmt.Errorf("root %s: %w", dir, err)
	}
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOTDIR {
			return anchor{}, fmt.Errorf("root %s: not a directory", dir)
		}
		return anchor{}, &os.PathError{Op: "open root", Path: abs, Err: err}
	}
	var st, rs unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return anchor{}, &os.PathError{Op: "stat root", Path: abs, Err: err}
	}
	a := anchor{dir: abs, fd: fd}
	a.host = unix.Stat("/", &rs) == nil && rs.Dev == st.Dev && rs.Ino == st.Ino
	probe, err := unix.Openat2(fd, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
	if err == nil {
		unix.Close(probe)
	}
	a.openat2 = err == nil
	if err := confinable(abs, a.host, err); err != nil {
		unix.Close(fd)
		return anchor{}, err
	}
	return a, nil
}

func (a *anchor) close() error {
	if a.fd < 0 {
		return nil
	}
	err := unix.Close(a.fd)
	a.fd = -1
	return err
}

// Dir returns the host path of the root.
func (a *anchor) Dir() string { return a.dir }

// IsHost reports whether the root is the running system's own "/", which is
// when live kernel state (/proc, netlink, systemd) describes this guest.
func (a *anchor) IsHost() bool { return a.host }

// Display returns the name to show for guest path p in messages and
// errors: the guest path itself ("/etc/resolv.conf"), under an image root
// as on the live system. An operator edits the file at that path in the
// guest, and every fix is written in guest paths; the report names the
// root once, in its header (Dir). Display is the one place this is
// decided, for guestcheck and sealprep alike.
func (a *anchor) Display(p string) string { return Clean(p) }

// open resolves guest path p inside the root (following symlinks in-root,
// the last one too unless flags has O_NOFOLLOW) and opens it.
func (a *anchor) open(p string, flags int) (int, error) {
	r := rel(p)
	if !a.openat2 {
		// Only the host root gets here: resolving from "/" is already
		// confined to "/".
		for {
			fd, err := unix.Openat(a.fd, r, flags|unix.O_CLOEXEC, 0)
			if err == unix.EINTR {
				continue
			}
			return fd, err
		}
	}
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(a.fd, r, how)
		// EAGAIN: a concurrent rename raced a ".." lookup; the kernel asks
		// for a retry rather than risk an escape.
		if (err == unix.EAGAIN || err == unix.EINTR) && i < 64 {
			continue
		}
		return fd, err
	}
}
