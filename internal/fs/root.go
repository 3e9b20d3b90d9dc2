// Package fs gives guestcheck and sealprep their only way to touch guest
// files: a Root opened once from --root. Paths are the guest's own absolute
// paths ("/etc/hostname"); absolute symlinks inside an image resolve inside
// the image (chroot semantics), never on the host.
package fs

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxFileSize bounds ReadFile so that a runaway file cannot exhaust memory.
const MaxFileSize = 64 << 20

// ErrTooLarge is returned by ReadFile for files over MaxFileSize.
var ErrTooLarge = errors.New("file too large")

// Root is a directory that stands for a guest's "/". The zero value is not
// usable; call Open.
type Root struct {
	dir  string // absolute, cleaned host path of the root
	host bool   // dir is "/": plain system calls already have chroot semantics
	fd   int    // O_PATH descriptor of dir, -1 when host
	// openat2 is false on kernels older than 5.6; resolution then happens
	// in user space, component by component.
	openat2 bool
	limit   int64 // ReadFile's bound; MaxFileSize unless a test lowers it
}

// Open opens dir as a guest root.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("root %s: not a directory", dir)
	}
	r := &Root{dir: abs, host: abs == "/", fd: -1, limit: MaxFileSize}
	if r.host {
		return r, nil
	}
	fd, err := unix.Open(abs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", dir, err)
	}
	r.fd = fd
	// Probe openat2 once; ENOSYS means an old kernel.
	probe, err := unix.Openat2(fd, ".", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT})
	if err == nil {
		unix.Close(probe)
		r.openat2 = true
	}
	return r, nil
}

// Close releases the root's descriptor.
func (r *Root) Close() error {
	if r.fd >= 0 {
		err := unix.Close(r.fd)
		r.fd = -1
		return err
	}
	return nil
}

// Dir returns the host path of the root.
func (r *Root) Dir() string { return r.dir }

// IsHost reports whether the root is the running system's own "/", which is
// when live kernel state (/proc, netlink, systemd) describes this guest.
func (r *Root) IsHost() bool { return r.host }

// Clean turns a guest path into its canonical absolute form ("/etc/x").
func Clean(p string) string { return path.Clean("/" + p) }

// Display returns the name to show for guest path p in messages: the guest
// path itself on the live system, the host path under an image root.
func (r *Root) Display(p string) string {
	p = Clean(p)
	if r.host {
		return p
	}
	return filepath.Join(r.dir, p)
}

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
	if r.host {
		return os.OpenFile(Clean(p), flags, 0)
	}
	if r.openat2 {
		fd, err := unix.Openat2(r.fd, rel(p), &unix.OpenHow{
			Flags:   uint64(flags) | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: r.Display(p), Err: err}
		}
		return os.NewFile(uintptr(fd), r.Display(p)), nil
	}
	hp, err := r.resolve(p, true)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(hp, flags|unix.O_NOFOLLOW, 0)
}

// resolve maps guest path p to a host path under the root without
// openat2, following symlinks (the last one only if follow) inside the root.
// It is racy against concurrent renames, which is acceptable for readers on
// kernels older than 5.6.
func (r *Root) resolve(p string, follow bool) (string, error) {
	parts := strings.Split(rel(p), "/")
	cur := "/"
	links := 0
	for len(parts) > 0 {
		c := parts[0]
		parts = parts[1:]
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		hp := filepath.Join(r.dir, next)
		st, err := os.Lstat(hp)
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				return "", &os.PathError{Op: "open", Path: r.Display(p), Err: iofs.ErrNotExist}
			}
			return "", err
		}
		if st.Mode()&iofs.ModeSymlink == 0 || (len(parts) == 0 && !follow) {
			cur = next
			continue
		}
		links++
		if links > 40 {
			return "", &os.PathError{Op: "open", Path: r.Display(p), Err: unix.ELOOP}
		}
		target, err := os.Readlink(hp)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return filepath.Join(r.dir, cur), nil
}

// Open opens guest path p for reading.
func (r *Root) Open(p string) (*os.File, error) { return r.openIn(p, os.O_RDONLY) }

// ReadFile reads guest path p, up to MaxFileSize.
func (r *Root) ReadFile(p string) ([]byte, error) {
	f, err := r.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, r.limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.Display(p), err)
	}
	if int64(len(b)) > r.limit {
		return nil, fmt.Errorf("read %s: %w (over %d bytes)", r.Display(p), ErrTooLarge, r.limit)
	}
	return b, nil
}

// Stat follows symlinks (inside the root) and describes the target.
func (r *Root) Stat(p string) (iofs.FileInfo, error) {
	if r.host {
		return os.Stat(Clean(p))
	}
	f, err := r.openIn(p, unix.O_PATH)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// Lstat describes p itself, not following a final symlink.
func (r *Root) Lstat(p string) (iofs.FileInfo, error) {
	if r.host {
		return os.Lstat(Clean(p))
	}
	dir, base := path.Split(Clean(p))
	if base == "" {
		return r.Stat("/")
	}
	d, err := r.openIn(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: r.Display(p), Err: err}
	}
	return statInfo(base, &st), nil
}

// Readlink returns the target of symlink p as stored (not re-rooted).
func (r *Root) Readlink(p string) (string, error) {
	if r.host {
		return os.Readlink(Clean(p))
	}
	dir, base := path.Split(Clean(p))
	d, err := r.openIn(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return "", err
	}
	defer d.Close()
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(int(d.Fd()), base, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: r.Display(p), Err: err}
	}
	return string(buf[:n]), nil
}

// ReadDir lists directory p, sorted by name.
func (r *Root) ReadDir(p string) ([]iofs.DirEntry, error) {
	if r.host {
		return os.ReadDir(Clean(p))
	}
	d, err := r.openIn(p, os.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	// os.ReadDir sorts; *os.File.ReadDir returns directory order.
	slices.SortFunc(ents, func(a, b iofs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// Exists reports whether p exists (following symlinks). Errors other than
// "not found" count as existing, so callers go on to read and report them.
func (r *Root) Exists(p string) bool {
	_, err := r.Stat(p)
	return err == nil || !errors.Is(err, iofs.ErrNotExist)
}
