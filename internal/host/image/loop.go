package image

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Loop flags (linux/loop.h); x/sys does not name them.
const (
	loFlagsReadOnly  = 1
	loFlagsAutoclear = 4
)

// loop is an attached loop device. Its fd stays open until the filesystem
// is mounted: the device is attached with LO_FLAGS_AUTOCLEAR, so the
// kernel detaches it by itself once the mount is gone and no fd is left,
// and a process killed before it mounted leaves no loop device behind.
type loop struct {
	Dev string
	fd  int
}

// attachLoop binds a new loop device to size bytes of file at offset. tag
// goes into lo_file_name, which is how teardown recognises the session's
// devices later, even after a SIGKILL.
func attachLoop(file string, offset, size int64, readOnly bool, tag string) (*loop, error) {
	flags := unix.O_RDWR
	if readOnly {
		flags = unix.O_RDONLY
	}
	ffd, err := unix.Open(file, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", file, err)
	}
	defer unix.Close(ffd)
	ctl, err := unix.Open("/dev/loop-control", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("loop devices: %w (is the loop module loaded?)", err)
	}
	defer unix.Close(ctl)
	var cfg unix.LoopConfig
	cfg.Fd = uint32(ffd)
	cfg.Info.Offset = uint64(offset)
	cfg.Info.Sizelimit = uint64(size)
	cfg.Info.Flags = loFlagsAutoclear
	if readOnly {
		cfg.Info.Flags |= loFlagsReadOnly
	}
	copy(cfg.Info.File_name[:len(cfg.Info.File_name)-1], tag)
	// Another process may take the free device between GET_FREE and
	// CONFIGURE: then CONFIGURE says EBUSY and we ask again.
	for try := 0; try < 32; try++ {
		n, err := unix.IoctlRetInt(ctl, unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return nil, fmt.Errorf("find a free loop device: %w", err)
		}
		dev := fmt.Sprintf("/dev/loop%d", n)
		lfd, err := unix.Open(dev, flags|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", dev, err)
		}
		if err := unix.IoctlLoopConfigure(lfd, &cfg); err != nil {
			unix.Close(lfd)
			if errors.Is(err, unix.EBUSY) {
				continue
			}
			return nil, fmt.Errorf("attach %s to %s: %w", dev, file, err)
		}
		return &loop{Dev: dev, fd: lfd}, nil
	}
	return nil, errors.New("attach a loop device: every free device was taken by another process")
}

// release closes the fd; with autoclear, an unmounted device goes away.
func (l *loop) release() {
	if l != nil && l.fd >= 0 {
		unix.Close(l.fd)
		l.fd = -1
	}
}

// taggedLoops lists the bound loop devices whose lo_file_name is tag.
func taggedLoops(tag string) []string {
	var out []string
	ents, _ := filepath.Glob("/sys/block/loop*/loop")
	for _, e := range ents {
		dev := "/dev/" + filepath.Base(filepath.Dir(e))
		fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		info, err := unix.IoctlLoopGetStatus64(fd)
		unix.Close(fd)
		if err != nil {
			continue
		}
		name := string(info.File_name[:])
		if i := strings.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if name == tag {
			out = append(out, dev)
		}
	}
	return out
}

// detachLoop clears dev (LOOP_CLR_FD). A device still mounted is only
// marked for autoclear by the kernel; an unbound one is fine.
func detachLoop(dev string) error {
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer unix.Close(fd)
	if err := unix.IoctlSetInt(fd, unix.LOOP_CLR_FD, 0); err != nil && !errors.Is(err, unix.ENXIO) {
		return fmt.Errorf("detach %s: %w", dev, err)
	}
	return nil
}

// loopsOn lists the loop devices whose backing file is file.
func loopsOn(file string) []string {
	var out []string
	ents, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, e := range ents {
		b, err := os.ReadFile(e)
		if err == nil && strings.TrimSpace(string(b)) == file {
			out = append(out, "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(e))))
		}
	}
	return out
}
