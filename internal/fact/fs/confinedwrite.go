package fs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// TempSuffix ends the names of the temporary files that Replace and
// Symlink create next to their target. A run killed between creating one
// and renaming it leaves it behind; the next run removes it before reuse.
const TempSuffix = ".sealprep~"

// tempName is the fixed temporary name for base: fixed, so that an
// interrupted run's leftover is found and replaced rather than piling up.
func tempName(base string) string {
	n := "." + base
	if max := unix.NAME_MAX - len(TempSuffix); len(n) > max {
		n = n[:max]
	}
	return n + TempSuffix
}

// SHA256 returns the hex SHA-256 of b, the form Replace's expect takes.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// openTarget opens p's parent and an O_PATH descriptor of p itself (never
// following it), and checks that p is on its parent's mount. A missing p
// gives pfd -1 and a nil error.
func (c *Confined) openTarget(op, p string) (dfd, pfd int, base string, e, parent Entry, err error) {
	dfd, base, err = c.openParent(p)
	if err != nil {
		return -1, -1, "", e, parent, c.pathErr(op, p, err)
	}
	parent, err = statxAt(dfd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		unix.Close(dfd)
		return -1, -1, "", e, parent, c.pathErr(op, p, err)
	}
	pfd, err = unix.Openat(dfd, base, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return dfd, -1, base, e, parent, nil
	}
	if err != nil {
		unix.Close(dfd)
		return -1, -1, "", e, parent, c.pathErr(op, p, err)
	}
	e, err = statxAt(pfd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		unix.Close(pfd)
		unix.Close(dfd)
		return -1, -1, "", e, parent, c.pathErr(op, p, err)
	}
	e.Name = base
	if !e.SameMount(parent) {
		unix.Close(pfd)
		unix.Close(dfd)
		return -1, -1, "", e, parent, c.pathErr(op, p, ErrMountPoint)
	}
	return dfd, pfd, base, e, parent, nil
}

// Outcome says what a mutation did.
type Outcome struct {
	// Changed is false when the file was already in the asked-for state.
	Changed bool
	// Links is the link count of the file the mutation acted on, as fstat
	// saw it on the opened descriptor, when above 1: the path then got a
	// new inode and the other names kept the old one, content and all.
	Links uint32
}

// Truncate is TruncateFile without the outcome's details.
func (c *Confined) Truncate(p string, perm int) (changed bool, err error) {
	o, err := c.TruncateFile(p, perm)
	return o.Changed, err
}

// TruncateFile empties regular file p; perm >= 0 also sets its permission
// bits. A file with one name is emptied in place, so its inode, owner,
// extended attributes and SELinux label stay, and a daemon holding it open
// keeps writing to it. A file with more names (a hard link: cp -al trees,
// snapshot tools, ostree) is never changed in place, since its other names
// may lie outside the root: p is replaced by a new empty file with the
// old owner, mode and extended attributes, and the other names keep the
// old content. The link count is judged on the opened descriptor, at the
// moment of acting. A missing p is left missing. An already empty file
// with the right mode is not touched. Anything but a regular file is
// refused (ErrKind) without being opened for writing.
func (c *Confined) TruncateFile(p string, perm int) (Outcome, error) {
	dfd, pfd, base, e, parent, err := c.openTarget("truncate", p)
	if err != nil {
		return Outcome{}, err
	}
	defer unix.Close(dfd)
	if pfd < 0 {
		return Outcome{}, nil
	}
	defer unix.Close(pfd)
	if e.Kind != KindRegular {
		return Outcome{}, c.pathErr("truncate", p, fmt.Errorf("%w: is a %s, not a regular file", ErrKind, e.Kind))
	}
	if e.Size == 0 && (perm < 0 || uint32(perm) == e.Perm) {
		return Outcome{}, nil
	}
	if e.Nlink > 1 {
		return c.replaceLinked(p, dfd, pfd, base, e, parent, nil, perm)
	}
	fd, got, err := reopen(pfd, unix.O_WRONLY, e, func() (int, error) {
		return unix.Openat(dfd, base, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return Outcome{}, c.pathErr("truncate", p, err)
	}
	defer unix.Close(fd)
	if got.Nlink > 1 {
		// Linked since the first look: the descriptor's count is the one
		// that holds.
		return c.replaceLinked(p, dfd, pfd, base, got, parent, nil, perm)
	}
	if got.Size != 0 {
		if err := unix.Ftruncate(fd, 0); err != nil {
			return Outcome{}, c.pathErr("truncate", p, err)
		}
	}
	if perm >= 0 && uint32(perm) != got.Perm {
		if err := unix.Fchmod(fd, uint32(perm)); err != nil {
			return Outcome{Changed: true}, c.pathErr("chmod", p, err)
		}
	}
	c.markDirty(dfd, parent.Dev)
	return Outcome{Changed: true}, nil
}

// replaceLinked swaps a new file holding data in for p, whose inode (e)
// has other names: the new file gets e's owner, mode (or perm) and
// extended attributes, read through a read-only descriptor, and the old
// inode is never opened for writing.
func (c *Confined) replaceLinked(p string, dfd, pfd int, base string, e, parent Entry, data []byte, perm int) (Outcome, error) {
	src, got, err := reopen(pfd, unix.O_RDONLY, e, func() (int, error) {
		return unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return Outcome{}, c.pathErr("truncate", p, err)
	}
	defer unix.Close(src)
	if perm < 0 {
		perm = int(got.Perm)
	}
	if err := c.swapIn("truncate", p, dfd, base, src, got, data, perm); err != nil {
		return Outcome{}, err
	}
	c.markDirty(dfd, parent.Dev)
	return Outcome{Changed: true, Links: got.Nlink}, nil
}

// Replace is ReplaceFile without the outcome's details.
func (c *Confined) Replace(p string, data []byte, perm int, expect string) (changed bool, err error) {
	o, err := c.ReplaceFile(p, data, perm, expect)
	return o.Changed, err
}

// ReplaceFile makes regular file p hold data, atomically: a temporary file
// in the same directory gets the data, the old file's owner, mode (or perm
// when >= 0) and extended attributes (SELinux label included), is fsynced
// and renamed over p. The old inode is only read, so the other names of a
// hard-linked file keep the old content (Outcome.Links says how many names
// it had). A missing p is created (mode perm, 0644 if perm < 0). When
// expect is not empty, p's current content must hash to it (SHA256), else
// ErrChanged: the plan was made from other content. Identical content and
// mode change nothing.
func (c *Confined) ReplaceFile(p string, data []byte, perm int, expect string) (Outcome, error) {
	dfd, pfd, base, e, parent, err := c.openTarget("replace", p)
	if err != nil {
		return Outcome{}, err
	}
	defer unix.Close(dfd)
	var src = -1
	var links uint32
	if pfd >= 0 {
		defer unix.Close(pfd)
		if e.Kind != KindRegular {
			return Outcome{}, c.pathErr("replace", p, fmt.Errorf("%w: is a %s, not a regular file", ErrKind, e.Kind))
		}
		src, e, err = reopen(pfd, unix.O_RDONLY, e, func() (int, error) {
			return unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		})
		if err != nil {
			return Outcome{}, c.pathErr("replace", p, err)
		}
		defer unix.Close(src)
		old, err := io.ReadAll(io.LimitReader(fdReader(src), maxReplaceSize+1))
		if err != nil {
			return Outcome{}, c.pathErr("replace", p, err)
		}
		if len(old) > maxReplaceSize {
			return Outcome{}, c.pathErr("replace", p, ErrTooLarge)
		}
		if expect != "" && SHA256(old) != expect {
			return Outcome{}, c.pathErr("replace", p, ErrChanged)
		}
		if bytes.Equal(old, data) && (perm < 0 || uint32(perm) == e.Perm) {
			return Outcome{}, nil
		}
		if perm < 0 {
			perm = int(e.Perm)
		}
		if e.Nlink > 1 {
			links = e.Nlink
		}
	} else {
		if expect != "" && expect != SHA256(nil) {
			return Outcome{}, c.pathErr("replace", p, ErrChanged)
		}
		if perm < 0 {
			perm = 0o644
		}
	}
	if err := c.swapIn("replace", p, dfd, base, src, e, data, perm); err != nil {
		return Outcome{}, err
	}
	c.markDirty(dfd, parent.Dev)
	return Outcome{Changed: true, Links: links}, nil
}

// swapIn writes data to base's temporary file in dfd, gives it the owner
// and extended attributes of src (when src >= 0, described by e) and mode
// perm, fsyncs it and renames it over base. On failure the temporary file
// is removed; a kill leaves it for the next createTemp to clear.
func (c *Confined) swapIn(op, p string, dfd int, base string, src int, e Entry, data []byte, perm int) error {
	tmp, err := c.createTemp(dfd, base)
	if err != nil {
		return c.pathErr(op, p, err)
	}
	ok := false
	defer func() {
		unix.Close(tmp)
		if !ok {
			unix.Unlinkat(dfd, tempName(base), 0)
		}
	}()
	if len(data) > 0 {
		if _, err := fdWriter(tmp).Write(data); err != nil {
			return c.pathErr(op, p, err)
		}
	}
	if src >= 0 {
		if e.UID != uint32(os.Geteuid()) || e.GID != uint32(os.Getegid()) {
			if err := unix.Fchown(tmp, int(e.UID), int(e.GID)); err != nil {
				return c.pathErr("chown", p, err)
			}
		}
		if err := copyXattrs(src, tmp); err != nil {
			return c.pathErr(op, p, err)
		}
	}
	// Fchmod after Fchown: chown clears setuid/setgid bits.
	if err := unix.Fchmod(tmp, uint32(perm)); err != nil {
		return c.pathErr("chmod", p, err)
	}
	if err := unix.Fsync(tmp); err != nil {
		return c.pathErr("fsync", p, err)
	}
	if err := unix.Renameat(dfd, tempName(base), dfd, base); err != nil {
		return c.pathErr("rename", p, err)
	}
	ok = true
	return nil
}

// createTemp creates base's temporary file in dfd, exclusively, after
// removing a leftover from an interrupted run (only a regular file or a
// symlink: anything else there is refused).
func (c *Confined) createTemp(dfd int, base string) (int, error) {
	if err := clearTemp(dfd, base); err != nil {
		return -1, err
	}
	return unix.Openat(dfd, tempName(base), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
}

func clearTemp(dfd int, base string) error {
	t, err := statxAt(dfd, tempName(base), unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return err
	}
	if t.Kind != KindRegular && t.Kind != KindSymlink {
		return fmt.Errorf("%s: %w: leftover temporary is a %s", tempName(base), ErrKind, t.Kind)
	}
	if err := unix.Unlinkat(dfd, tempName(base), 0); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

// copyXattrs copies every extended attribute of src to dst. Filesystems
// without xattr support are not an error.
func copyXattrs(src, dst int) error {
	size, err := unix.Flistxattr(src, nil)
	if err == unix.ENOTSUP || err == unix.EOPNOTSUPP || size == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list xattrs: %w", err)
	}
	buf := make([]byte, size)
	n, err := unix.Flistxattr(src, buf)
	if err != nil {
		return fmt.Errorf("list xattrs: %w", err)
	}
	for _, name := range strings.Split(string(buf[:n]), "\x00") {
		if name == "" {
			continue
		}
		vs, err := unix.Fgetxattr(src, name, nil)
		if err != nil {
			return fmt.Errorf("get xattr %s: %w", name, err)
		}
		val := make([]byte, vs)
		vn, err := unix.Fgetxattr(src, name, val)
		if err != nil {
			return fmt.Errorf("get xattr %s: %w", name, err)
		}
		if err := unix.Fsetxattr(dst, name, val[:vn], 0); err != nil && err != unix.ENOTSUP && err != unix.EOPNOTSUPP {
			return fmt.Errorf("set xattr %s: %w", name, err)
		}
	}
	return nil
}

// Symlink makes p a symlink to target. An existing symlink with that target
// is left alone; an existing entry whose kind is in replace (never a
// directory) is replaced atomically through a temporary link and a rename,
// so p never goes missing. Any other existing entry is refused (ErrKind).
func (c *Confined) Symlink(p, target string, replace Kinds) (changed bool, err error) {
	dfd, pfd, base, e, parent, err := c.openTarget("symlink", p)
	if err != nil {
		return false, err
	}
	defer unix.Close(dfd)
	if pfd < 0 {
		if err := unix.Symlinkat(target, dfd, base); err != nil {
			return false, c.pathErr("symlink", p, err)
		}
		c.markDirty(dfd, parent.Dev)
		return true, nil
	}
	unix.Close(pfd)
	if e.Kind == KindSymlink {
		cur, err := readlinkAt(dfd, base, c.Display(p))
		if err != nil {
			return false, err
		}
		if cur == target {
			return false, nil
		}
	}
	if !replace.Has(e.Kind) || e.Kind == KindDir {
		return false, c.pathErr("symlink", p, fmt.Errorf("%w: is a %s", ErrKind, e.Kind))
	}
	if err := clearTemp(dfd, base); err != nil {
		return false, c.pathErr("symlink", p, err)
	}
	if err := unix.Symlinkat(target, dfd, tempName(base)); err != nil {
		return false, c.pathErr("symlink", p, err)
	}
	if err := unix.Renameat(dfd, tempName(base), dfd, base); err != nil {
		unix.Unlinkat(dfd, tempName(base), 0)
		return false, c.pathErr("rename", p, err)
	}
	c.markDirty(dfd, parent.Dev)
	return true, nil
}

// Mkdir creates directory p with perm if it does not exist. Its parent
// must exist. An existing directory is left alone; any other kind is
// refused (ErrKind).
func (c *Confined) Mkdir(p string, perm uint32) (changed bool, err error) {
	dfd, pfd, base, e, parent, err := c.openTarget("mkdir", p)
	if err != nil {
		return false, err
	}
	defer unix.Close(dfd)
	if pfd >= 0 {
		unix.Close(pfd)
		if e.Kind == KindDir {
			return false, nil
		}
		return false, c.pathErr("mkdir", p, fmt.Errorf("%w: is a %s", ErrKind, e.Kind))
	}
	if err := unix.Mkdirat(dfd, base, perm); err != nil {
		return false, c.pathErr("mkdir", p, err)
	}
	c.markDirty(dfd, parent.Dev)
	return true, nil
}

type fdReader int

func (f fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

type fdWriter int

func (f fdWriter) Write(b []byte) (int, error) {
	total := 0
	for len(b) > 0 {
		n, err := unix.Write(int(f), b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return total, err
		}
		total += n
		b = b[n:]
	}
	return total, nil
}
