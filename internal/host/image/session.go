package image

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	factmounts "github.com/guestcheck/guestcheck/internal/fact/mounts"
	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// DefaultStateDir is where sessions live: a directory each, holding the
// state file, the FUSE export and the mount points.
const DefaultStateDir = "/run/sealprep/image"

// Options shape a session.
type Options struct {
	// ReadOnly attaches and mounts everything read-only: plan and verify.
	ReadOnly bool
	// StateDir defaults to DefaultStateDir.
	StateDir string
	// Tools maps a tool name (qemu-img, qemu-storage-daemon) to its path;
	// a missing entry is looked up in PATH and /usr/bin.
	Tools map[string]string
	// Policy is what the user allows of the image's header beyond the
	// defaults (--allow-backing).
	Policy Policy
}

// Mount is one filesystem of the image mounted for the seal.
type Mount struct {
	// Path is the guest's mount point ("/", "/boot", "/var").
	Path string `json:"path"`
	// Dir is where it is mounted on the host.
	Dir string `json:"dir"`
	// Device is the loop device.
	Device string `json:"device"`
	// Source names the partition and filesystem: "partition 2 (ext4)".
	Source string `json:"source"`
	// How says why this partition: its type, its os-release, an fstab line.
	How      string `json:"how"`
	ReadOnly bool   `json:"read_only"`
	// Partition is the partition number (0: the whole disk), and FSType,
	// Label and UUID its filesystem's, so that reports can name it as a
	// person knows it (partition 1, ext4, LABEL=rootfs).
	Partition int `json:"partition"`
	// Volume is the logical volume ("vg/lv") the filesystem is on.
	Volume string `json:"volume,omitempty"`
	FSType string `json:"fstype"`
	Label  string `json:"label,omitempty"`
	UUID   string `json:"uuid,omitempty"`
}

// Refusal is an image sealprep will not attach, and why. Nothing was
// changed.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

func refuse(format string, args ...any) error { return &Refusal{fmt.Sprintf(format, args...)} }

// Session is an attached, mounted image.
type Session struct {
	// File is the image's absolute path.
	File string
	// Format is "raw" or "qcow2".
	Format string
	// Method says how the image was attached.
	Method string
	// Chain is the vetted image and its backing files (only read), open
	// read-only until Close.
	Chain *Chain
	// Dir is the session directory, Root the host directory of the guest's "/".
	Dir, Root string
	// Mounts are in mount order, the root first.
	Mounts []Mount
	// Notes say what was deliberately not done.
	Notes []string
	// Recovered lists what earlier, killed runs had left attached and this
	// run took down before starting.
	Recovered []string

	opts    Options
	tag     string
	disk    string // the file the loop devices read: the raw image or the FUSE export
	lockFD  int
	qsd     *exec.Cmd
	qsdDone chan struct{}
	qsdErr  *BoundedBuffer
	once    sync.Once
	closeEr error
	// lvm: activate the image's LVM volumes (only in the appliance);
	// dmNames are the device-mapper devices made, removed at Close.
	lvm     bool
	dmNames []string
}

type state struct {
	PID   int    `json:"pid"`
	Start string `json:"start"` // /proc/PID/stat starttime, against PID reuse
	Image string `json:"image"`
	Tag   string `json:"tag"`
}

func (o Options) stateDir() string {
	if o.StateDir == "" {
		return DefaultStateDir
	}
	return o.StateDir
}

func (o Options) tool(name, pkg string) (string, error) {
	if p, ok := o.Tools[name]; ok && p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{"/usr/bin", "/usr/sbin", "/usr/libexec"} {
		if st, err := os.Stat(filepath.Join(d, name)); err == nil && st.Mode().IsRegular() {
			return filepath.Join(d, name), nil
		}
	}
	return "", fmt.Errorf("%s is missing (Debian package %s)", name, pkg)
}

// Prepare checks file as every --image run does before anything reads
// it as a disk: a regular file, in use by nobody (no loop device, no
// QEMU lock), writable for a seal, and its header and backing chain
// vetted (OpenChain). The session it returns holds the vetted chain,
// open, and nothing else: Open attaches and mounts it on this host, the
// sealing appliance hands it to QEMU. Close releases it.
func Prepare(ctx context.Context, file string, o Options) (s *Session, err error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, refuse("the image is not a regular file (a block device or a directory: use --root on a mounted filesystem instead)")
	}
	s = &Session{File: abs, opts: o, lockFD: -1}
	if os.Geteuid() == 0 {
		// Only root attaches anything on the host: a user's run has no
		// earlier host session to take down.
		recovered, err := Recover(o.stateDir(), abs)
		var ref *Refusal
		if errors.As(err, &ref) {
			return nil, err
		}
		s.Recovered = recovered
		if err != nil {
			// Another image's leftovers are not this run's business; this
			// image's own are caught below as a loop device or a lock.
			s.Notes = append(s.Notes, fmt.Sprintf("leftovers of earlier runs not taken down: %v", err))
		}
	}
	if devs := loopsOn(abs); len(devs) > 0 {
		return nil, refuse("the image is in use: loop device %s is attached to it (losetup -d it, or wait for whoever uses it)", strings.Join(devs, ", "))
	}
	qemuImg, err := o.tool("qemu-img", "qemu-utils")
	if err != nil {
		return nil, refuse("cannot inspect the image: %v", err)
	}
	chain, err := OpenChain(ctx, qemuImg, abs, o.Policy)
	if errors.Is(err, ErrInUse) {
		return nil, refuse("the image is in use: a running VM or another tool has it open (%s); power the VM off first", strings.TrimPrefix(err.Error(), ErrInUse.Error()+": "))
	}
	if err != nil {
		return nil, err
	}
	s.Chain = chain
	s.Format = chain.Top().Format
	if !o.ReadOnly {
		if st.Mode().Perm()&0o222 == 0 {
			return nil, refuse("the image file is read-only (mode %04o): make it writable to seal it, or seal a copy", st.Mode().Perm())
		}
		fd, err := unix.Open(abs, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			chain.Close()
			return nil, refuse("the image file cannot be opened for writing (%v): seal a writable copy", err)
		}
		unix.Close(fd)
	}
	if backing := chain.Backing(); len(backing) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%s has backing files (%s): only the top layer is written; the backing files are opened read-only and stay as they are, so other images on the same backing file are not affected",
			abs, strings.Join(backing, " <- ")))
	}
	return s, nil
}

// Open attaches file, finds its root filesystem and mounts it, with the
// /boot, ESP and /var filesystems, under a new session directory. On any
// error everything it did is undone. Open first takes down what killed
// earlier runs left behind (Recovered).
//
// Open hands the image's filesystems to this host's kernel: it is the
// path for images the user built and trusts (--trust-image-filesystems);
// the sealing appliance (Prepare here, then OpenDevice inside it) is the path for
// every other image.
func Open(ctx context.Context, file string, o Options) (s *Session, err error) {
	if os.Geteuid() != 0 {
		if _, err := os.Stat(file); err != nil {
			return nil, err
		}
		return nil, refuse("--trust-image-filesystems needs root: it attaches loop devices and mounts filesystems on this host")
	}
	s, err = Prepare(ctx, file, o)
	if err != nil {
		return nil, err
	}
	if err := s.makeDir(); err != nil {
		s.Chain.Close()
		return nil, err
	}
	return s.mount(ctx, s.attach)
}

// mount runs attach, then finds and mounts the root and the rest; on an
// error everything is undone and the session is nil.
func (s *Session) mount(ctx context.Context, attach func(context.Context) error) (*Session, error) {
	err := attach(ctx)
	if err == nil {
		err = s.mountAll(ctx)
	}
	if err != nil {
		if cerr := s.Close(); cerr != nil {
			err = fmt.Errorf("%w (and cleaning up: %v)", err, cerr)
		}
		return nil, err
	}
	return s, nil
}

func (s *Session) makeDir() error {
	base := s.opts.stateDir()
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	id := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(rnd[:]))
	s.tag = "sealprep:" + id
	// The state file is in place before the directory has its name, so a
	// session directory without one is never live.
	var tmp string
	for try := 0; ; try++ {
		if err := os.MkdirAll(base, 0o700); err != nil {
			return err
		}
		var err error
		tmp, err = os.MkdirTemp(base, fmt.Sprintf(".new-%d-", os.Getpid()))
		if err == nil {
			break
		}
		// Another run's last session took the empty directory away
		// between the two calls (dropStateDir): make it again.
		if !errors.Is(err, os.ErrNotExist) || try == 3 {
			return err
		}
	}
	b := fmt.Appendf(nil, `{"pid":%d,"start":%q,"image":%q,"tag":%q}`+"\n", os.Getpid(), procStart(os.Getpid()), s.File, s.tag)
	if err := os.WriteFile(filepath.Join(tmp, "state.json"), b, 0o600); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	s.Dir = filepath.Join(base, id)
	if err := os.Rename(tmp, s.Dir); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	return nil
}

func (s *Session) attach(ctx context.Context) error {
	if s.Format == "raw" {
		fd, err := lockRaw(s.File, s.opts.ReadOnly)
		if err != nil {
			return err
		}
		s.lockFD = fd
		s.disk = s.File
		s.Method = "a loop device on the raw file"
		return nil
	}
	qsd, err := s.opts.tool("qemu-storage-daemon", "qemu-system-common")
	if err != nil {
		return refuse("cannot attach the qcow2 image: %v (sealprep attaches qcow2 through qemu-storage-daemon, not the nbd kernel module)", err)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return refuse("cannot attach the qcow2 image: /dev/fuse is missing (the fuse kernel module), which the qemu-storage-daemon FUSE export needs")
	}
	s.disk = filepath.Join(s.Dir, "disk")
	if err := os.WriteFile(s.disk, nil, 0o600); err != nil {
		return err
	}
	files, err := s.daemonFiles()
	if err != nil {
		return err
	}
	// Its own process group (limitedCommand): a terminal's ^C reaches
	// sealprep, which then takes the mounts down before it stops the
	// daemon, never the other way.
	c, err := limitedCommand(DaemonLimits, qsd, qsdArgs(s.Chain, s.disk, s.opts.ReadOnly), files)
	if err != nil {
		return refuse("cannot attach the qcow2 image: %v", err)
	}
	c.SysProcAttr.Pdeathsig = 0
	c.Stdout = io.Discard
	s.qsdErr = NewBoundedBuffer(DaemonLimits.MaxOutput)
	c.Stderr = s.qsdErr
	err = c.Start()
	for _, f := range files[:1] {
		if f != s.Chain.Top().File {
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("start qemu-storage-daemon: %w", err)
	}
	s.qsd = c
	s.qsdDone = make(chan struct{})
	go func() { c.Wait(); close(s.qsdDone) }()
	s.Method = "qemu-storage-daemon's FUSE export and a loop device"
	deadline := time.After(20 * time.Second)
	for {
		if m, ok := mountAt(s.disk); ok && strings.HasPrefix(m.FSType, "fuse") {
			if st, err := os.Stat(s.disk); err == nil && st.Size() == s.Chain.Top().VirtualSize {
				return nil
			}
		}
		select {
		case <-s.qsdDone:
			return fmt.Errorf("qemu-storage-daemon exited: %s", firstLine(strings.TrimSpace(s.qsdErr.String())))
		case <-deadline:
			return errors.New("qemu-storage-daemon: the FUSE export did not appear within 20s")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// daemonFiles are the chain's files in chain order for the storage
// daemon. For a seal the top layer is opened again read-write through its
// vetted fd (/proc/self/fd), so the inode written is the one inspected.
func (s *Session) daemonFiles() ([]*os.File, error) {
	var files []*os.File
	for _, l := range s.Chain.Layers {
		files = append(files, l.File)
	}
	if s.opts.ReadOnly {
		return files, nil
	}
	top := s.Chain.Top()
	rw, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", top.File.Fd()), os.O_RDWR, 0)
	if err != nil {
		return nil, refuse("the image file cannot be opened for writing (%v): seal a writable copy", err)
	}
	files[0] = rw
	return files, nil
}

// lockRaw takes the byte-range locks QEMU takes on a raw file (OFD locks
// at 100 + permission bit and 200 + unshared permission bit), so that a VM
// started on the image while it is attached fails to get its write lock.
func lockRaw(file string, readOnly bool) (int, error) {
	flags := unix.O_RDWR
	if readOnly {
		flags = unix.O_RDONLY
	}
	fd, err := unix.Open(file, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	// 100: consistent read; 101: write; 201: nobody else writes.
	bytesToLock := []int64{100, 201}
	if !readOnly {
		bytesToLock = append(bytesToLock, 101)
	}
	for _, b := range bytesToLock {
		lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: b, Len: 1}
		if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, &lk); err != nil {
			unix.Close(fd)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
				return -1, refuse("the image is in use: another process holds QEMU's lock on it")
			}
			return -1, fmt.Errorf("lock %s: %w", file, err)
		}
	}
	// A writer that holds its lock on byte 101 would be a VM writing now.
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: 101, Len: 1}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_OFD_GETLK, &lk); err == nil && lk.Type != unix.F_UNLCK {
		unix.Close(fd)
		return -1, refuse("the image is in use: another process holds QEMU's write lock on it")
	}
	return fd, nil
}

// scan reads the disk's partitions, and in the appliance activates its
// LVM volumes as parts of their own.
func (s *Session) scan() ([]Part, error) {
	f, err := os.Open(s.disk)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := st.Size()
	if st.Mode()&os.ModeDevice != 0 {
		// A block device (the appliance's /dev/vda) stats as 0 bytes.
		if size, err = f.Seek(0, io.SeekEnd); err != nil {
			f.Close()
			return nil, err
		}
	}
	parts, _, err := ScanDisk(f, size)
	if err == nil && s.lvm {
		parts = append(parts, s.activateVolumes(f, parts)...)
	}
	f.Close()
	if err != nil {
		return nil, refuse("%v", err)
	}
	return parts, nil
}

// probeRoots mounts each candidate read-only and keeps the one with an
// os-release.
func (s *Session) probeRoots(ctx context.Context, parts []Part, choice RootChoice) (RootChoice, error) {
	var found []int
	for _, i := range choice.Candidates {
		if err := ctx.Err(); err != nil {
			return choice, err
		}
		ok, err := s.holdsOSRelease(parts[i])
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: not probed for a root: %v", parts[i], err))
			continue
		}
		if ok {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		for _, p := range parts {
			if p.Container == "lvm" && !s.lvm {
				return choice, refuse("no partition holds /etc/os-release, and %s is an LVM physical volume: the root is likely in its volume group, whose volumes only the sealing appliance activates (run without --trust-image-filesystems)", p)
			}
		}
		return choice, refuse("no partition holds /etc/os-release or /usr/lib/os-release, and the partition types mark none as the Linux root (Discoverable Partitions Specification)")
	case 1:
		choice.Index, choice.How = found[0], "the only partition with an os-release; no partition type marks a Linux root (Discoverable Partitions Specification)"
	default:
		var names []string
		for _, i := range found {
			names = append(names, parts[i].String())
		}
		return choice, refuse("several partitions hold an os-release (%s), so which one is the root is ambiguous: mount it yourself and use --root", strings.Join(names, ", "))
	}
	return choice, nil
}

func (s *Session) mountAll(ctx context.Context) error {
	parts, err := s.scan()
	if err != nil {
		return err
	}
	choice, err := ChooseRoot(parts, "")
	if err != nil {
		return refuse("%v", err)
	}
	if choice.Index < 0 {
		if choice, err = s.probeRoots(ctx, parts, choice); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.Root = filepath.Join(s.Dir, "root")
	if err := s.mountPart(parts[choice.Index], "/", s.Root, "", choice.How); err != nil {
		return err
	}
	root, err := fs.OpenConfined(s.Root)
	if err != nil {
		return err
	}
	defer root.Close()
	var entries []fstab.Entry
	if b, err := root.ReadFileLimit(factmounts.FstabPath, 1<<20); err == nil {
		var bad []problem.Problem
		entries, bad = fstab.Parse(b)
		for _, e := range bad {
			s.Notes = append(s.Notes, fmt.Sprintf("image /etc/fstab: %v", e))
		}
	}
	extra, notes := PlanMounts(entries, parts, choice.Index)
	s.Notes = append(s.Notes, notes...)
	for _, m := range extra {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The mount point must be a real directory inside the image: a
		// symlink there would make mount(2) follow it out of the root.
		if e, err := root.Lstat(m.Path); err != nil || e.Kind != fs.KindDir {
			why := "missing"
			if err == nil {
				why = "a " + e.Kind.String()
			}
			s.Notes = append(s.Notes, fmt.Sprintf("%s (%s) not mounted: %s in the image is %s, not a directory", parts[m.Part], m.How, m.Path, why))
			continue
		}
		err := s.mountPart(parts[m.Part], m.Path, filepath.Join(s.Root, m.Path), m.Options, m.How)
		if errors.Is(err, unix.ENODEV) {
			// Not this host's filesystem (a kernel without vfat): the
			// image's own directory stays visible, and the plan says so.
			s.Notes = append(s.Notes, fmt.Sprintf("%s (%s) not mounted on %s: this host's kernel has no %s filesystem, so the seal does not reach it",
				parts[m.Part], m.How, m.Path, parts[m.Part].FS.Type))
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// holdsOSRelease mounts p read-only on a probe directory and looks for an
// os-release file, confined to the filesystem.
func (s *Session) holdsOSRelease(p Part) (bool, error) {
	dir := filepath.Join(s.Dir, fmt.Sprintf("probe%d", p.Number))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return false, err
	}
	defer os.Remove(dir)
	l, err := attachLoop(p.backing(s.disk), p.Offset, p.Size, true, s.tag)
	if err != nil {
		return false, err
	}
	defer l.release()
	if _, err := mountFS(l.Dev, dir, p.FS.Type, true, ""); err != nil {
		return false, err
	}
	defer unmount(dir)
	r, err := fs.OpenConfined(dir)
	if err != nil {
		return false, err
	}
	defer r.Close()
	for _, name := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if _, err := r.Stat(name); err == nil {
			return true, nil
		}
	}
	return false, nil
}

func (s *Session) mountPart(p Part, guest, dir, data, how string) error {
	if guest == "/" {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	l, err := attachLoop(p.backing(s.disk), p.Offset, p.Size, s.opts.ReadOnly, s.tag)
	if err != nil {
		return err
	}
	defer l.release()
	noReplay, err := mountFS(l.Dev, dir, p.FS.Type, s.opts.ReadOnly, data)
	if err != nil {
		return fmt.Errorf("mount %s on %s: %w", p, guest, err)
	}
	if noReplay != "" {
		s.Notes = append(s.Notes, fmt.Sprintf("%s on %s needs its journal replayed (it was not cleanly unmounted), which plan and verify do not do: mounted with %s, this run does not see the changes still in the journal; apply replays it first, and may find more, or fail to mount a journal that is damaged", p, guest, noReplay))
	}
	s.Mounts = append(s.Mounts, Mount{Path: guest, Dir: dir, Device: l.Dev, Source: p.String(), How: how, ReadOnly: s.opts.ReadOnly,
		Partition: p.Number, Volume: p.Volume, FSType: p.FS.Type, Label: p.FS.Label, UUID: p.FS.UUID})
	return nil
}

// mountFS mounts dev on dir, never with setuid, device or exec rights: the
// image's files are data to the host. A read-only mount that fails (a
// journal to replay on a read-only device) is retried without replay; the
// option that did it (noload, norecovery) is returned, so that the run
// can say what it did not see.
func mountFS(dev, dir, typ string, readOnly bool, data string) (string, error) {
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	err := unix.Mount(dev, dir, typ, flags, data)
	if err == nil || !readOnly {
		return "", err
	}
	norec := map[string]string{"ext2": "noload", "ext3": "noload", "ext4": "noload", "xfs": "norecovery", "btrfs": "rescue=nologreplay"}[typ]
	if norec == "" {
		return "", err
	}
	opts := norec
	if data != "" {
		opts = data + "," + norec
	}
	if err2 := unix.Mount(dev, dir, typ, flags, opts); err2 != nil {
		return "", err
	}
	return norec, nil
}

// Close unmounts and detaches everything of the session; it is safe to
// call more than once and from a signal path.
func (s *Session) Close() error {
	s.once.Do(func() {
		s.closeEr = errors.Join(teardown(s.Dir, s.tag, s), dmRemove(s.dmNames))
		s.Chain.Close()
		if s.lockFD >= 0 {
			unix.Fsync(s.lockFD)
			unix.Close(s.lockFD)
			s.lockFD = -1
		}
	})
	return s.closeEr
}
