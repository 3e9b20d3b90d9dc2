package fs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Errors the confined primitives return; callers branch on them with errors.Is.
var (
	// ErrNoOpenat2 means the kernel cannot resolve paths inside a directory
	// (openat2 needs Linux 5.6). Only the running system's own "/" can then
	// be used, because there the kernel's ordinary resolution is already
	// confined to it.
	ErrNoOpenat2 = errors.New("kernel lacks openat2 (Linux 5.6 or later), which confining an image root requires")
	// ErrKind means a file is not of a kind the caller may act on.
	ErrKind = errors.New("unexpected file type")
	// ErrMountPoint means a target is on another mount than its parent:
	// sealprep never removes, truncates or replaces across a mount.
	ErrMountPoint = errors.New("on another mount than its parent")
	// ErrChanged means a file changed between planning and applying.
	ErrChanged = errors.New("changed since it was planned")
	// ErrSymlink means a directory to list or walk is a symlink, which
	// directory operations never follow.
	ErrSymlink = errors.New("is a symlink; not followed")
)

// maxTreeDepth bounds recursion (and open descriptors) in tree walks.
const maxTreeDepth = 256

// maxReplaceSize bounds files that Replace reads to compare and rewrite.
const maxReplaceSize = 16 << 20

// Kind is a file type as lstat reports it.
type Kind uint8

// The file kinds. The zero value is not a kind.
const (
	KindRegular Kind = iota + 1
	KindDir
	KindSymlink
	KindFIFO
	KindSocket
	KindCharDevice
	KindBlockDevice
)

var kindNames = [...]string{"", "regular", "dir", "symlink", "fifo", "socket", "char-device", "block-device"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

func kindOfMode(m uint32) Kind {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return KindRegular
	case unix.S_IFDIR:
		return KindDir
	case unix.S_IFLNK:
		return KindSymlink
	case unix.S_IFIFO:
		return KindFIFO
	case unix.S_IFSOCK:
		return KindSocket
	case unix.S_IFCHR:
		return KindCharDevice
	case unix.S_IFBLK:
		return KindBlockDevice
	}
	return 0
}

// Kinds is a set of file kinds: what an operation is allowed to remove.
type Kinds uint16

// KindsOf returns the set of ks.
func KindsOf(ks ...Kind) Kinds {
	var s Kinds
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// Has reports whether k is in s.
func (s Kinds) Has(k Kind) bool { return k != 0 && s&(1<<k) != 0 }

// List returns the kinds in s in declaration order.
func (s Kinds) List() []Kind {
	var out []Kind
	for k := KindRegular; k <= KindBlockDevice; k++ {
		if s.Has(k) {
			out = append(out, k)
		}
	}
	return out
}

func (s Kinds) String() string {
	var names []string
	for _, k := range s.List() {
		names = append(names, k.String())
	}
	return strings.Join(names, ",")
}

// MarshalJSON writes s as a list of kind names.
func (s Kinds) MarshalJSON() ([]byte, error) {
	names := []string{}
	for _, k := range s.List() {
		names = append(names, k.String())
	}
	return json.Marshal(names)
}

// UnmarshalJSON reads a list of kind names.
func (s *Kinds) UnmarshalJSON(b []byte) error {
	var names []string
	if err := json.Unmarshal(b, &names); err != nil {
		return err
	}
	*s = 0
	for _, n := range names {
		found := false
		for k := KindRegular; k <= KindBlockDevice; k++ {
			if k.String() == n {
				*s |= 1 << k
				found = true
			}
		}
		if !found {
			return fmt.Errorf("unknown file kind %q", n)
		}
	}
	return nil
}

// Entry describes one file without following a final symlink.
type Entry struct {
	Name  string
	Kind  Kind
	Perm  uint32 // permission bits, including setuid, setgid and sticky
	Size  int64
	UID   uint32
	GID   uint32
	Dev   uint64
	Ino   uint64
	MntID uint64 // 0 when the kernel does not report mount IDs (before 5.8)
	// Nlink is the inode's link count: above 1, other names (perhaps
	// outside the root) share the content, and sealprep never changes the
	// inode in place.
	Nlink uint32
	// Mtime is the last modification time, Ctime the last status change
	// (which a copy or a restore from backup cannot set back).
	Mtime, Ctime time.Time
	// Rdev is the device number a block or character device node stands
	// for (0 for other kinds).
	Rdev uint64
}

// IsDir reports whether e is a directory.
func (e Entry) IsDir() bool { return e.Kind == KindDir }

// IsRegular reports whether e is a regular file.
func (e Entry) IsRegular() bool { return e.Kind == KindRegular }

// Mode returns e's kind and permission bits as an io/fs FileMode, for code
// that formats or compares modes the standard library's way.
func (e Entry) Mode() iofs.FileMode {
	m := iofs.FileMode(e.Perm & 0o777)
	switch e.Kind {
	case KindDir:
		m |= iofs.ModeDir
	case KindSymlink:
		m |= iofs.ModeSymlink
	case KindFIFO:
		m |= iofs.ModeNamedPipe
	case KindSocket:
		m |= iofs.ModeSocket
	case KindCharDevice:
		m |= iofs.ModeDevice | iofs.ModeCharDevice
	case KindBlockDevice:
		m |= iofs.ModeDevice
	}
	if e.Perm&unix.S_ISUID != 0 {
		m |= iofs.ModeSetuid
	}
	if e.Perm&unix.S_ISGID != 0 {
		m |= iofs.ModeSetgid
	}
	if e.Perm&unix.S_ISVTX != 0 {
		m |= iofs.ModeSticky
	}
	return m
}

// SameMount reports whether e and o are on one filesystem and, when the
// kernel says, one mount: a bind mount of the same filesystem has the same
// st_dev, so the mount ID is what catches it.
func (e Entry) SameMount(o Entry) bool {
	return e.Dev == o.Dev && (e.MntID == 0 || o.MntID == 0 || e.MntID == o.MntID)
}

// Confined is a guest root opened for sealprep. Every path is the guest's
// own absolute path and resolves inside the root: parents through openat2
// with RESOLVE_IN_ROOT (absolute symlinks re-rooted, ".." clamped), the last
// component with *at system calls that never follow it. Mutations re-check
// the file's kind and mount at the moment they act.
type Confined struct {
	anchor

	mu    sync.Mutex
	dirty map[uint64]int // st_dev -> readable directory descriptor, for Sync
}

// OpenConfined opens dir as a confined guest root.
func OpenConfined(dir string) (*Confined, error) {
	a, err := openAnchor(dir)
	if err != nil {
		return nil, err
	}
	return &Confined{anchor: a, dirty: map[uint64]int{}}, nil
}

// confinable decides whether a root can be used given the openat2 probe's
// result: without openat2 (ENOSYS before Linux 5.6, EPERM under some
// seccomp profiles) only the host root can, because the kernel's ordinary
// resolution from "/" is already confined to it. For an image root,
// resolving symlinks in user space would race against the image's
// contents, so sealprep refuses rather than weaken the guarantee.
func confinable(dir string, host bool, probeErr error) error {
	if probeErr == nil || host {
		return nil
	}
	return fmt.Errorf("root %s: %w (openat2: %v)", dir, ErrNoOpenat2, probeErr)
}

// Close releases the root's descriptors. It does not sync; call Sync first.
func (c *Confined) Close() error {
	c.mu.Lock()
	for dev, fd := range c.dirty {
		if fd >= 0 {
			unix.Close(fd)
		}
		delete(c.dirty, dev)
	}
	c.mu.Unlock()
	return c.anchor.close()
}

func (c *Confined) pathErr(op, p string, err error) error {
	return &os.PathError{Op: op, Path: c.Display(p), Err: err}
}

// openParent opens the directory holding guest path p (resolved in-root)
// and returns it with p's last component, which the caller must act on with
// *at calls that do not follow it.
func (c *Confined) openParent(p string) (int, string, error) {
	cp := Clean(p)
	if cp == "/" {
		return -1, "", unix.EINVAL
	}
	dir, base := path.Split(cp)
	fd, err := c.open(dir, unix.O_PATH|unix.O_DIRECTORY)
	return fd, base, err
}

func statxAt(dfd int, name string, flags int) (Entry, error) {
	var sx unix.Statx_t
	mask := unix.STATX_TYPE | unix.STATX_MODE | unix.STATX_UID | unix.STATX_GID | unix.STATX_INO | unix.STATX_SIZE | unix.STATX_NLINK | unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_MNT_ID
	for {
		err := unix.Statx(dfd, name, flags|unix.AT_STATX_SYNC_AS_STAT, mask, &sx)
		if err == unix.EINTR {
			continue
		}
		if err == unix.ENOSYS {
			return fstatatEntry(dfd, name, flags)
		}
		if err != nil {
			return Entry{}, err
		}
		break
	}
	e := Entry{
		Name:  name,
		Kind:  kindOfMode(uint32(sx.Mode)),
		Perm:  uint32(sx.Mode) & 0o7777,
		Size:  int64(sx.Size),
		UID:   sx.Uid,
		GID:   sx.Gid,
		Dev:   unix.Mkdev(sx.Dev_major, sx.Dev_minor),
		Ino:   sx.Ino,
		Nlink: sx.Nlink,
		Mtime: time.Unix(sx.Mtime.Sec, int64(sx.Mtime.Nsec)),
		Ctime: time.Unix(sx.Ctime.Sec, int64(sx.Ctime.Nsec)),
		Rdev:  unix.Mkdev(sx.Rdev_major, sx.Rdev_minor),
	}
	if sx.Mask&unix.STATX_MNT_ID != 0 {
		e.MntID = sx.Mnt_id
	}
	return e, nil
}

// fstatatEntry serves kernels before 4.11, which have no statx.
func fstatatEntry(dfd int, name string, flags int) (Entry, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, flags); err != nil {
		return Entry{}, err
	}
	return entryOf(name, &st), nil
}

// entryOf describes a stat result as an Entry (no mount ID: stat has none).
func entryOf(name string, st *unix.Stat_t) Entry {
	return Entry{Name: name, Kind: kindOfMode(st.Mode), Perm: st.Mode & 0o7777, Size: st.Size,
		UID: st.Uid, GID: st.Gid, Dev: st.Dev, Ino: st.Ino, Nlink: uint32(st.Nlink),
		Mtime: time.Unix(st.Mtim.Unix()), Ctime: time.Unix(st.Ctim.Unix()), Rdev: st.Rdev}
}

// Lstat describes guest path p itself, not following a final symlink.
func (c *Confined) Lstat(p string) (Entry, error) {
	if Clean(p) == "/" {
		e, err := statxAt(c.fd, "", unix.AT_EMPTY_PATH)
		if err != nil {
			return e, c.pathErr("lstat", p, err)
		}
		e.Name = "/"
		return e, nil
	}
	dfd, base, err := c.openParent(p)
	if err != nil {
		return Entry{}, c.pathErr("lstat", p, err)
	}
	defer unix.Close(dfd)
	e, err := statxAt(dfd, base, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return e, c.pathErr("lstat", p, err)
	}
	return e, nil
}

// Stat describes guest path p, following symlinks inside the root.
func (c *Confined) Stat(p string) (Entry, error) {
	fd, err := c.open(p, unix.O_PATH)
	if err != nil {
		return Entry{}, c.pathErr("stat", p, err)
	}
	defer unix.Close(fd)
	e, err := statxAt(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return e, c.pathErr("stat", p, err)
	}
	e.Name = path.Base(Clean(p))
	return e, nil
}

// reopen turns the O_PATH descriptor pfd, already checked to be want, into
// a descriptor open with flags. Through /proc/self/fd it opens exactly that
// inode, so a file swapped in after the check (a FIFO, a device node) is
// never opened. Without /proc it uses fallback and compares inodes after
// the fact. It returns the opened file as fstat sees it now, so that
// callers judge the link count on the descriptor they act on.
func reopen(pfd int, flags int, want Entry, fallback func() (int, error)) (int, Entry, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NONBLOCK
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", pfd), flags, 0)
	if err == unix.ENOENT {
		fd, err = fallback()
	}
	if err != nil {
		return -1, Entry{}, err
	}
	got, err := statxAt(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		unix.Close(fd)
		return -1, Entry{}, err
	}
	if got.Dev != want.Dev || got.Ino != want.Ino {
		unix.Close(fd)
		return -1, Entry{}, ErrChanged
	}
	return fd, got, nil
}

// ReadFile reads regular file p, following symlinks inside the root, up to
// MaxFileSize. Other kinds are never opened.
func (c *Confined) ReadFile(p string) ([]byte, error) { return c.ReadFileLimit(p, 0) }

// ReadFileLimit is ReadFile bounded at limit bytes (MaxFileSize when
// limit <= 0).
func (c *Confined) ReadFileLimit(p string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = MaxFileSize
	}
	pfd, err := c.open(p, unix.O_PATH)
	if err != nil {
		return nil, c.pathErr("read", p, err)
	}
	defer unix.Close(pfd)
	e, err := statxAt(pfd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return nil, c.pathErr("read", p, err)
	}
	if e.Kind != KindRegular {
		return nil, c.pathErr("read", p, fmt.Errorf("%w: %s", ErrKind, e.Kind))
	}
	fd, _, err := reopen(pfd, unix.O_RDONLY, e, func() (int, error) { return c.open(p, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY) })
	if err != nil {
		return nil, c.pathErr("read", p, err)
	}
	f := os.NewFile(uintptr(fd), c.Display(p))
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err // the *os.File's *PathError names p already
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("read %s: %w (over %d bytes)", c.Display(p), ErrTooLarge, limit)
	}
	return b, nil
}

// Readlink returns the target of symlink p as stored.
func (c *Confined) Readlink(p string) (string, error) {
	dfd, base, err := c.openParent(p)
	if err != nil {
		return "", c.pathErr("readlink", p, err)
	}
	defer unix.Close(dfd)
	return readlinkAt(dfd, base, c.Display(p))
}

func readlinkAt(dfd int, base, display string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dfd, base, buf)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: display, Err: err}
	}
	return string(buf[:n]), nil
}

// openDirNoFollow opens directory p for reading; a symlink at p is refused
// with ErrSymlink, whatever it points to.
func (c *Confined) openDirNoFollow(p string) (*os.File, error) {
	var fd int
	var err error
	if Clean(p) == "/" {
		fd, err = unix.Openat(c.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		var dfd int
		var base string
		dfd, base, err = c.openParent(p)
		if err != nil {
			return nil, c.pathErr("open", p, err)
		}
		defer unix.Close(dfd)
		fd, err = unix.Openat(dfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			if e, lerr := statxAt(dfd, base, unix.AT_SYMLINK_NOFOLLOW); lerr == nil {
				if e.Kind == KindSymlink {
					err = ErrSymlink
				} else {
					err = fmt.Errorf("%w: %s, not a directory", ErrKind, e.Kind)
				}
			}
		}
	}
	if err != nil {
		return nil, c.pathErr("open", p, err)
	}
	return os.NewFile(uintptr(fd), c.Display(p)), nil
}

// ReadDir lists directory p without following p itself if it is a
// symlink (ErrSymlink) and describes each entry without following it.
// Entries are sorted by name.
func (c *Confined) ReadDir(p string) ([]Entry, error) {
	f, err := c.openDirNoFollow(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err // the *os.File's *PathError names p already
	}
	sort.Strings(names)
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		e, err := statxAt(int(f.Fd()), n, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return nil, c.pathErr("lstat", path.Join(Clean(p), n), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// TreeStats counts what a recursive removal did, or would do.
type TreeStats struct {
	Removed   int   // entries removed (or that would be), the top included
	Kept      int   // entries left because their kind is not in the set
	KeptKinds Kinds // the kinds of those entries
	Mounts    int   // directories left because they are on another mount
	Errors    int   // entries that could not be examined or removed
}

// Complete reports whether nothing was left behind.
func (s TreeStats) Complete() bool { return s.Kept == 0 && s.Mounts == 0 && s.Errors == 0 }

// ScanTree reports what Remove(p, kinds) would do, changing nothing. p
// itself is not followed if it is a symlink.
func (c *Confined) ScanTree(p string, kinds Kinds) (TreeStats, error) {
	return c.remove(p, kinds, true)
}

// walk removes (or, when dry, counts) the entries of directory name in dfd
// whose kind is in kinds, depth first. It never follows a symlink (one
// inside the tree is unlinked if kinds allows symlinks, else kept), and
// never descends into a directory on another mount than the tree's top.
// want is the directory as the caller saw it; a different inode at open
// time means a swap, and the walk stops there.
func (c *Confined) walk(dfd int, name string, want Entry, kinds Kinds, dry bool, depth int, st *TreeStats) error {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	self, err := statxAt(fd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return err
	}
	if self.Dev != want.Dev || self.Ino != want.Ino {
		return ErrChanged
	}
	names, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	var first error
	fail := func(n string, err error) {
		st.Errors++
		if first == nil {
			first = fmt.Errorf("%s: %w", n, err)
		}
	}
	removed := false
	for _, n := range names {
		e, err := statxAt(fd, n, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			fail(n, err)
			continue
		}
		if !kinds.Has(e.Kind) {
			st.Kept++
			st.KeptKinds |= KindsOf(e.Kind)
			continue
		}
		if e.Kind == KindDir {
			if !e.SameMount(self) || depth >= maxTreeDepth {
				st.Mounts++
				continue
			}
			before := *st
			if err := c.walk(fd, n, e, kinds, dry, depth+1, st); err != nil {
				fail(n, err)
				continue
			}
			if st.Kept != before.Kept || st.Mounts != before.Mounts || st.Errors != before.Errors {
				continue // cannot become empty
			}
			if dry {
				st.Removed++
				continue
			}
			if err := unix.Unlinkat(fd, n, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
				fail(n, err)
				continue
			}
			st.Removed++
			removed = true
			continue
		}
		if dry {
			st.Removed++
			continue
		}
		if err := unix.Unlinkat(fd, n, 0); err != nil && err != unix.ENOENT {
			fail(n, err)
			continue
		}
		st.Removed++
		removed = true
	}
	if removed {
		c.markDirty(fd, self.Dev)
	}
	return first
}

// Remove removes guest path p if its kind is in kinds; a directory is
// removed recursively, keeping (and counting) the entries whose kind is not
// in kinds, and then the directory itself once empty. The last component is
// never followed: a symlink is unlinked, never its target. Removing an
// absent path succeeds with zero stats.
func (c *Confined) Remove(p string, kinds Kinds) (TreeStats, error) {
	return c.remove(p, kinds, false)
}

func (c *Confined) remove(p string, kinds Kinds, dry bool) (TreeStats, error) {
	var st TreeStats
	op := "remove"
	if dry {
		op = "scan"
	}
	dfd, base, err := c.openParent(p)
	if err != nil {
		if err == unix.ENOENT {
			return st, nil
		}
		return st, c.pathErr(op, p, err)
	}
	defer unix.Close(dfd)
	e, err := statxAt(dfd, base, unix.AT_SYMLINK_NOFOLLOW)
	if err == unix.ENOENT {
		return st, nil
	}
	if err != nil {
		return st, c.pathErr(op, p, err)
	}
	if !kinds.Has(e.Kind) {
		return st, c.pathErr(op, p, fmt.Errorf("%w: is a %s, not %s", ErrKind, e.Kind, kinds))
	}
	parent, err := statxAt(dfd, "", unix.AT_EMPTY_PATH)
	if err != nil {
		return st, c.pathErr(op, p, err)
	}
	if !e.SameMount(parent) {
		return st, c.pathErr(op, p, ErrMountPoint)
	}
	if e.Kind == KindDir {
		if err := c.walk(dfd, base, e, kinds, dry, 0, &st); err != nil {
			return st, c.pathErr(op, p, err)
		}
		if !st.Complete() {
			return st, nil
		}
		if !dry {
			if err := unix.Unlinkat(dfd, base, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
				return st, c.pathErr(op, p, err)
			}
			c.markDirty(dfd, parent.Dev)
		}
		st.Removed++
		return st, nil
	}
	if !dry {
		if err := unix.Unlinkat(dfd, base, 0); err != nil && err != unix.ENOENT {
			return st, c.pathErr(op, p, err)
		}
		c.markDirty(dfd, parent.Dev)
	}
	st.Removed = 1
	return st, nil
}

// markDirty remembers a directory on filesystem dev so that Sync can flush
// that filesystem once, instead of an fsync per file.
func (c *Confined) markDirty(dirfd int, dev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.dirty[dev]; ok {
		return
	}
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fd = -1 // Sync falls back to sync(2)
	}
	c.dirty[dev] = fd
}

// Sync flushes every filesystem a mutation touched (syncfs), so that a
// seal reported as done survives a power cut.
func (c *Confined) Sync() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var first error
	global := false
	for dev, fd := range c.dirty {
		if fd < 0 {
			global = true
		} else {
			if err := unix.Syncfs(fd); err != nil && first == nil {
				first = fmt.Errorf("syncfs %s: %w", c.dir, err)
			}
			unix.Close(fd)
		}
		delete(c.dirty, dev)
	}
	if global {
		unix.Sync()
	}
	return first
}

// ReadOnly reports whether guest path p (followed in-root) is on a
// read-only mount.
func (c *Confined) ReadOnly(p string) (bool, error) {
	fd, err := c.open(p, unix.O_PATH)
	if err != nil {
		return false, c.pathErr("statfs", p, err)
	}
	defer unix.Close(fd)
	var s unix.Statfs_t
	if err := unix.Fstatfs(fd, &s); err != nil {
		return false, c.pathErr("statfs", p, err)
	}
	return s.Flags&unix.ST_RDONLY != 0, nil
}
