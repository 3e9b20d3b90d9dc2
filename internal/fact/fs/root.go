// Package fs gives guestcheck and sealprep their only way to touch guest
// files. Root (read-only, guestcheck) and Confined (read-write, sealprep)
// share one anchor: a descriptor of the root directory through which every
// guest path is resolved with openat2 RESOLVE_IN_ROOT, so absolute
// symlinks inside an image resolve inside the image (chroot semantics),
// never on the host. A kernel without openat2 can open only the running
// system's own "/"; there is no user-space resolver to race. A Dir (a
// directory of a Root held open, for sysfs) resolves names below itself
// with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS, so it cannot leave the
// directory it was opened as.
package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxFileSize bounds ReadFile so that a runaway file cannot exhaust memory.
const MaxFileSize = 64 << 20

// ErrTooLarge is returned by ReadFile for files over MaxFileSize.
var ErrTooLarge = errors.New("file too large")

// Root is a directory that stands for a guest's "/", opened for reading.
// It resolves paths with the same anchor, and so the same openat2 policy,
// as Confined, the read-write view sealprep uses. The zero value is not
// usable; call Open.
type Root struct {
	anchor
	limit int64 // ReadFile's bound; MaxFileSize unless a test lowers it
}

// Open opens dir as a guest root. Without openat2 (before Linux 5.6) only
// the running system's own "/" can be opened, as for OpenConfined.
func Open(dir string) (*Root, error) {
	a, err := openAnchor(dir)
	if err != nil {
		return nil, err
	}
	return &Root{anchor: a, limit: MaxFileSize}, nil
}

// Close releases the root's descriptor.
func (r *Root) Close() error { return r.anchor.close() }

// Clean turns a guest path into its canonical absolute form ("/etc/x").
func Clean(p string) string { return path.Clean("/" + p) }

// rel is p relative to the root, for *at system calls.
func rel(p string) string {
	c := strings.TrimPrefix(Clean(p), "/")
	if c == "" {
		return "."
	}
	return c
}

// openIn opens guest path p with flags, resolving every symlink inside the root.
func (r *Root) openIn(p string, flags int) (*os.File, error) {
	fd, err := r.anchor.open(p, flags)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: r.Display(p), Err: err}
	}
	return os.NewFile(uintptr(fd), r.Display(p)), nil
}

// Open opens guest path p for reading.
func (r *Root) Open(p string) (*os.File, error) { return r.openIn(p, os.O_RDONLY) }

// ReadFile reads guest path p, up to MaxFileSize. It reads the raw
// descriptor: an *os.File would cost an fcntl and a finalizer per file,
// and a run reads a thousand small /proc and /sys files. Errors are the
// ones an *os.File gives.
func (r *Root) ReadFile(p string) ([]byte, error) {
	fd, err := r.anchor.open(p, os.O_RDONLY)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: r.Display(p), Err: err}
	}
	defer unix.Close(fd)
	return r.readFD(fd, p, true)
}

// ReadFileLimit is ReadFile bounded at limit bytes (the root's bound when
// limit <= 0 or above it).
func (r *Root) ReadFileLimit(p string, limit int64) ([]byte, error) {
	if limit <= 0 || limit >= r.limit {
		return r.ReadFile(p)
	}
	lr := *r
	lr.limit = limit
	return lr.ReadFile(p)
}

// readFD reads the open descriptor fd of guest path p to its end, up to
// the root's limit. sized asks for the buffer to be sized from fstat.
func (r *Root) readFD(fd int, p string, sized bool) ([]byte, error) {
	// Size the buffer from fstat for files over a page: growing it from 512
	// bytes copies a megabyte file (dpkg status, a binary) about 20 times.
	// Smaller ones start at 512 bytes: /proc files say 0 and every sysfs
	// attribute says 4096 whatever it holds.
	n := 512
	var st unix.Stat_t
	if sized && unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size > 4096 {
		n = int(min(st.Size, r.limit)) + 1 // +1: EOF is seen without growing
	}
	b := make([]byte, 0, n)
	for int64(len(b)) <= r.limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		buf := b[len(b):cap(b)]
		if left := r.limit + 1 - int64(len(b)); int64(len(buf)) > left {
			buf = buf[:left]
		}
		m, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: r.Display(p), Err: err}
		}
		if m <= 0 {
			break
		}
		b = b[:len(b)+m]
	}
	if int64(len(b)) > r.limit {
		return nil, fmt.Errorf("read %s: %w (over %d bytes)", r.Display(p), ErrTooLarge, r.limit)
	}
	return b, nil
}

// Stat follows symlinks (inside the root) and describes the target. Like
// ReadFile it keeps to the raw descriptor (no *os.File: an fcntl and a
// finalizer saved on every call).
func (r *Root) Stat(p string) (Entry, error) {
	fd, err := r.anchor.open(p, unix.O_PATH)
	if err != nil {
		return Entry{}, &os.PathError{Op: "open", Path: r.Display(p), Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Entry{}, &os.PathError{Op: "stat", Path: r.Display(p), Err: err}
	}
	return entryOf(path.Base(Clean(p)), &st), nil
}

// parent opens the directory holding guest path p, resolved in the root,
// and returns its descriptor and p's last component.
func (r *Root) parent(p string) (int, string, error) {
	dir, base := path.Split(Clean(p))
	fd, err := r.anchor.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, base, &os.PathError{Op: "open", Path: r.Display(dir), Err: err}
	}
	return fd, base, nil
}

// Lstat describes p itself, not following a final symlink.
func (r *Root) Lstat(p string) (Entry, error) {
	if Clean(p) == "/" {
		return r.Stat("/")
	}
	fd, base, err := r.parent(p)
	if err != nil {
		return Entry{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstatat(fd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Entry{}, &os.PathError{Op: "lstat", Path: r.Display(p), Err: err}
	}
	return entryOf(base, &st), nil
}

// Readlink returns the target of symlink p as stored (not re-rooted).
func (r *Root) Readlink(p string) (string, error) {
	fd, base, err := r.parent(p)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(fd, base, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: r.Display(p), Err: err}
	}
	return string(buf[:n]), nil
}

// ReadDir lists directory p (following p itself if it is a symlink inside
// the root), sorted by name, and describes each entry without following
// it. An entry that vanishes while listed is left out.
func (r *Root) ReadDir(p string) ([]Entry, error) {
	d, err := r.openIn(p, os.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	slices.Sort(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		serr := unix.Fstatat(int(d.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW)
		if serr == unix.ENOENT {
			continue
		}
		if serr != nil {
			return out, &os.PathError{Op: "lstat", Path: r.Display(path.Join(Clean(p), n)), Err: serr}
		}
		out = append(out, entryOf(n, &st))
	}
	return out, err
}

// ReadDirNames lists the names in directory p, sorted, describing none of
// them: for walks of /proc and /sys, where a stat per entry is the cost.
func (r *Root) ReadDirNames(p string) ([]string, error) {
	d, err := r.openIn(p, os.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// Exists reports whether p exists (following symlinks). Errors other than
// "not found" count as existing, so callers go on to read and report them.
func (r *Root) Exists(p string) bool {
	_, err := r.Stat(p)
	return err == nil || !errors.Is(err, iofs.ErrNotExist)
}
