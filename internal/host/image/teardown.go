package image

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

func mounts() []mountinfo.Mount {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	ms, _ := mountinfo.Parse(b)
	return ms
}

// mountAt is the topmost mount on exactly dir.
func mountAt(dir string) (mountinfo.Mount, bool) {
	var found mountinfo.Mount
	ok := false
	for _, m := range mounts() {
		if m.MountPoint == dir {
			found, ok = m, true
		}
	}
	return found, ok
}

// under lists the mount points below dir (not dir itself), deepest first.
func under(dir string) []mountinfo.Mount {
	var out []mountinfo.Mount
	for _, m := range mounts() {
		if strings.HasPrefix(m.MountPoint, dir+"/") {
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].MountPoint) > len(out[j].MountPoint) })
	return out
}

// unmount flushes and unmounts dir. A busy filesystem is retried for a
// few seconds (a probe's fd closing); it is then detached lazily, and the
// error says so.
func unmount(dir string) error {
	if fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		unix.Syncfs(fd)
		unix.Close(fd)
	}
	var err error
	for try := 0; try < 100; try++ {
		err = unix.Unmount(dir, unix.UMOUNT_NOFOLLOW)
		if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
			return nil // EINVAL: not a mount point (any more)
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(30 * time.Millisecond)
	}
	if lerr := unix.Unmount(dir, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); lerr == nil {
		return fmt.Errorf("unmount %s: %w; detached lazily, the device is released when its last user goes", dir, err)
	}
	return fmt.Errorf("unmount %s: %w", dir, err)
}

// teardown undoes a session from what the kernel shows: the mounts below
// dir, deepest first; loop devices carrying tag; the qemu-storage-daemon
// whose arguments name dir; the FUSE export; then dir itself. s is the
// live session, when teardown runs in the process that made it.
func teardown(dir, tag string, s *Session) error {
	if dir == "" {
		return nil
	}
	var errs []error
	export := filepath.Join(dir, "disk")
	for _, m := range under(dir) {
		if m.MountPoint == export {
			continue
		}
		if err := unmount(m.MountPoint); err != nil {
			errs = append(errs, err)
		}
	}
	for _, dev := range taggedLoops(tag) {
		if err := detachLoop(dev); err != nil {
			errs = append(errs, err)
		}
	}
	// Loop devices detach asynchronously after the last close; wait for
	// them before the daemon under them goes. Under load (a loaded build
	// host, udev probing the device) that takes seconds, not milliseconds.
	for i := 0; i < 500 && len(taggedLoops(tag)) > 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if left := taggedLoops(tag); len(left) > 0 {
		errs = append(errs, fmt.Errorf("loop devices still attached: %s", strings.Join(left, " ")))
	}
	if _, ok := mountAt(export); ok {
		// Flush the daemon's format layer (qcow2 metadata) through the export.
		if fd, err := unix.Open(export, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Fsync(fd)
			unix.Close(fd)
		}
	}
	if err := stopDaemons(dir, s); err != nil {
		errs = append(errs, err)
	}
	if _, ok := mountAt(export); ok {
		if err := unix.Unmount(export, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount the FUSE export %s: %w", export, err))
		}
	}
	if len(under(dir)) > 0 {
		errs = append(errs, fmt.Errorf("%s: mounts left, so the directory is kept", dir))
		return errors.Join(errs...)
	}
	// Only what sessions create, never a recursive delete: if anything
	// were still mounted here, RemoveAll would delete the image's files.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
		return errors.Join(errs...)
	}
	dropStateDir(filepath.Dir(dir))
	return errors.Join(errs...)
}

// dropStateDir removes the state directory base once its last session is
// gone, and with the default one /run/sealprep too, so that a finished
// --image run leaves nothing in /run. A directory another session still
// uses is not empty and stays: rmdir, never a recursive delete. A run
// that makes its session meanwhile makes the directory again (makeDir).
func dropStateDir(base string) {
	if os.Remove(base) == nil && base == DefaultStateDir {
		os.Remove(filepath.Dir(base))
	}
}

// stopDaemons ends the qemu-storage-daemon of the session: SIGTERM, which
// makes it flush and close the image, then SIGKILL after 10 seconds.
func stopDaemons(dir string, s *Session) error {
	if s != nil && s.qsd != nil {
		s.qsd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.qsdDone:
		case <-time.After(10 * time.Second):
			s.qsd.Process.Kill()
			<-s.qsdDone
		}
	}
	pids := daemonsOf(dir)
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(pids) > 0 {
		var alive []int
		for _, pid := range pids {
			if procAlive(pid) {
				alive = append(alive, pid)
			}
		}
		pids = alive
		if len(pids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return fmt.Errorf("qemu-storage-daemon %v did not stop on SIGTERM within 10s; killed", pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// daemonsOf lists qemu-storage-daemon processes whose arguments name a
// path in dir: those the session started.
func daemonsOf(dir string) []int {
	var out []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) != "qemu-storage-daemon" {
			continue
		}
		for _, a := range args[1:] {
			if strings.Contains(a, dir+"/") {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					out = append(out, pid)
				}
				break
			}
		}
	}
	return out
}

// procStat returns the state letter and start time of pid.
func procStat(pid int) (string, string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", false
	}
	// The command name may hold spaces and parentheses: fields follow the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", false
	}
	return f[0], f[19], true
}

func procStart(pid int) string {
	_, start, _ := procStat(pid)
	return start
}

func procAlive(pid int) bool {
	st, _, ok := procStat(pid)
	return ok && st != "Z" && st != "X"
}

// Recover takes down the sessions whose sealprep is gone (killed with
// SIGKILL, or the machine's power cut after /run survived). A live
// sealprep that holds image is a refusal; other live sessions are left.
func Recover(stateDir, image string) ([]string, error) {
	ents, err := os.ReadDir(stateDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, e := range ents {
		dir := filepath.Join(stateDir, e.Name())
		if !e.IsDir() {
			continue
		}
		if strings.HasPrefix(e.Name(), ".new-") {
			// A session that died while being created: only its state file.
			// The name carries the creator's pid.
			var pid int
			fmt.Sscanf(strings.TrimPrefix(e.Name(), ".new-"), "%d-", &pid)
			if info, err := e.Info(); err == nil && (pid > 0 && !procAlive(pid) || time.Since(info.ModTime()) > time.Minute) {
				os.Remove(filepath.Join(dir, "state.json"))
				os.Remove(dir)
			}
			continue
		}
		// The directory's name is "<pid>-<random>" and the tag
		// "sealprep:<name>": a lost state file loses only the image's name.
		st := state{Tag: "sealprep:" + e.Name()}
		fmt.Sscanf(e.Name(), "%d-", &st.PID)
		if b, err := os.ReadFile(filepath.Join(dir, "state.json")); err == nil {
			if err := json.Unmarshal(b, &st); err != nil || st.Tag == "" {
				errs = append(errs, fmt.Errorf("session %s: bad state file", dir))
				continue
			}
		}
		if st.PID > 0 && procAlive(st.PID) && (st.Start == "" || procStart(st.PID) == st.Start) {
			if st.Image == image {
				return nil, refuse("the image is being sealed by another sealprep (pid %d)", st.PID)
			}
			continue
		}
		if err := teardown(dir, st.Tag, nil); err != nil {
			errs = append(errs, fmt.Errorf("recover session %s of %s: %w", dir, st.Image, err))
			continue
		}
		done = append(done, fmt.Sprintf("session %s of %s (pid %d, gone): unmounted, detached and stopped", dir, st.Image, st.PID))
	}
	return done, errors.Join(errs...)
}
