package freeze

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// FIFREEZE and FITHAW are _IOWR('X', 119|120, int) from <linux/fs.h>;
// x/sys/unix does not define them.
const (
	FIFREEZE = 0xC0045877
	FITHAW   = 0xC0045878
)

// WatchdogEnv names the environment variable that turns a re-executed
// guestcheck into a freeze watchdog: "<deadline unix nanos>".
const WatchdogEnv = "GUESTCHECK_FREEZE_WATCHDOG"

// DefaultDeadline bounds how long a test freeze may last before the
// watchdog thaws the filesystem on its own.
const DefaultDeadline = 3 * time.Second

// Errors of Run that callers branch on.
var (
	// ErrRefused: the mount point is one guestcheck must never freeze.
	ErrRefused = errors.New("refusing to freeze")
	// ErrNeedRoot: FIFREEZE needs CAP_SYS_ADMIN.
	ErrNeedRoot = errors.New("freezing needs root (CAP_SYS_ADMIN)")
	// ErrCannotFreeze: the filesystem type has no freeze support (EOPNOTSUPP).
	ErrCannotFreeze = errors.New("filesystem cannot be frozen")
	// ErrAlreadyFrozen: someone else holds a freeze on it (EBUSY).
	ErrAlreadyFrozen = errors.New("filesystem is already frozen")
)

// Request describes one opt-in freeze test (--freeze-test).
type Request struct {
	// Mountpoint is the mount to freeze; it must be a mount point.
	Mountpoint string
	// Protect lists paths (guestcheck's output file, logs) whose
	// filesystem must not be frozen; a path that does not exist yet is
	// judged by its directory.
	Protect []string
	// Deadline is when the watchdog thaws on its own (DefaultDeadline when 0).
	Deadline time.Duration
	// Hold keeps the filesystem frozen this long before thawing; tests use
	// it to open a window. Zero thaws at once.
	Hold time.Duration
	// OnFrozen, when set, is called right after the freeze succeeds;
	// tests open their kill window there.
	OnFrozen func()
	// Exe is the binary to re-execute as the watchdog; /proc/self/exe
	// when empty. Its main must call IsWatchdog/RunWatchdog.
	Exe string
}

// Result reports a completed freeze test.
type Result struct {
	Mountpoint    string
	Device        string // major:minor
	FreezeLatency time.Duration
	ThawLatency   time.Duration
	// ThawedBy is "guestcheck", or "watchdog" when the deadline passed first.
	ThawedBy    string
	WatchdogPID int
}

// Run freezes and thaws req.Mountpoint once and measures both. A
// watchdog process, started and armed before the freeze, thaws the
// filesystem when the deadline passes or when this process dies (the pipe
// it reads reaches EOF), so the filesystem is never left frozen.
func Run(ctx context.Context, req Request) (Result, error) {
	res := Result{Mountpoint: fs.Clean(req.Mountpoint), ThawedBy: "guestcheck"}
	if os.Geteuid() != 0 {
		return res, ErrNeedRoot
	}
	if req.Deadline <= 0 {
		req.Deadline = DefaultDeadline
	}
	exe := req.Exe
	if exe == "" {
		exe = "/proc/self/exe"
	}
	dev, err := checkFreezable(res.Mountpoint, append([]string{exe}, req.Protect...))
	if err != nil {
		return res, err
	}
	res.Device = fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
	fd, err := unix.Open(res.Mountpoint, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return res, fmt.Errorf("open %s: %w", res.Mountpoint, err)
	}
	defer unix.Close(fd)
	if err := ctx.Err(); err != nil {
		return res, err
	}

	wd, err := startWatchdog(exe, fd, req.Deadline)
	if err != nil {
		return res, err
	}
	res.WatchdogPID = wd.cmd.Process.Pid
	defer wd.Done()

	t0 := time.Now()
	err = unix.IoctlSetInt(fd, FIFREEZE, 0)
	res.FreezeLatency = time.Since(t0)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOTTY):
		return res, fmt.Errorf("%s: %w (%v)", res.Mountpoint, ErrCannotFreeze, err)
	case errors.Is(err, unix.EBUSY):
		return res, fmt.Errorf("%s: %w (%v)", res.Mountpoint, ErrAlreadyFrozen, err)
	case err != nil:
		return res, fmt.Errorf("FIFREEZE %s: %w", res.Mountpoint, err)
	}
	// From here the filesystem is frozen: every path thaws it.
	if req.OnFrozen != nil {
		req.OnFrozen()
	}
	if req.Hold > 0 {
		select {
		case <-time.After(req.Hold):
		case <-ctx.Done():
		}
	}
	t1 := time.Now()
	err = unix.IoctlSetInt(fd, FITHAW, 0)
	res.ThawLatency = time.Since(t1)
	if errors.Is(err, unix.EINVAL) {
		// Not frozen any more: the watchdog's deadline passed first.
		res.ThawedBy = "watchdog"
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("FITHAW %s: %w (the watchdog thaws it at the deadline)", res.Mountpoint, err)
	}
	return res, nil
}

// Refusal says why the filesystem at mp may not be frozen here, or nil:
// the refusals of a freeze, asked before one (a missing directory, "/",
// a directory that is no mount point, the filesystems holding protect).
func Refusal(mp string, protect []string) error {
	_, err := checkFreezable(mp, protect)
	return err
}

// checkFreezable refuses "/", anything that is not a mount point, and the
// filesystems holding the protected paths. It returns the device.
func checkFreezable(mp string, protect []string) (uint64, error) {
	if mp == "/" {
		return 0, fmt.Errorf("%w /: the root filesystem holds guestcheck itself", ErrRefused)
	}
	var st, parent, root unix.Stat_t
	if err := unix.Stat(mp, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", mp, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, fmt.Errorf("%w %s: not a directory", ErrRefused, mp)
	}
	if err := unix.Stat(filepath.Dir(mp), &parent); err != nil {
		return 0, fmt.Errorf("stat %s: %w", filepath.Dir(mp), err)
	}
	if parent.Dev == st.Dev && parent.Ino != st.Ino {
		return 0, fmt.Errorf("%w %s: not a mount point", ErrRefused, mp)
	}
	if err := unix.Stat("/", &root); err == nil && root.Dev == st.Dev {
		return 0, fmt.Errorf("%w %s: it is on the root filesystem", ErrRefused, mp)
	}
	for _, p := range protect {
		if p == "" {
			continue
		}
		var ps unix.Stat_t
		q := p
		for unix.Stat(q, &ps) != nil {
			if q == "/" || q == "." {
				break
			}
			q = filepath.Dir(q)
		}
		if ps.Dev == st.Dev {
			return 0, fmt.Errorf("%w %s: it holds %s", ErrRefused, mp, p)
		}
	}
	return st.Dev, nil
}

// startWatchdog re-executes exe as the watchdog (a Guard) with the mount
// point's descriptor (fd 3), the control pipe (fd 4) and the status pipe
// (fd 5), and waits until it reports armed.
func startWatchdog(exe string, mpfd int, deadline time.Duration) (*Guard, error) {
	// A duplicate, so that closing the *os.File leaves the caller's
	// descriptor alone.
	dup, err := unix.FcntlInt(uintptr(mpfd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{WatchdogEnv + "=" + strconv.FormatInt(time.Now().Add(deadline).UnixNano(), 10)}
	cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(dup), "mountpoint")}
	return StartGuard(cmd, "the freeze watchdog", 5*time.Second)
}

// IsWatchdog reports whether this process was started as a freeze
// watchdog; main must then call RunWatchdog before anything else.
func IsWatchdog() bool { return os.Getenv(WatchdogEnv) != "" }

// RunWatchdog is the watchdog's whole life: arm, wait for "thawed",
// EOF (the parent died) or the deadline, thaw if needed, and return the
// exit code.
func RunWatchdog() int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	ns, err := strconv.ParseInt(os.Getenv(WatchdogEnv), 10, 64)
	if err != nil {
		return 2
	}
	const mpfd, controlfd, statusfd = 3, 4, 5
	control := os.NewFile(controlfd, "control")
	status := os.NewFile(statusfd, "status")
	got := make(chan byte, 1)
	go func() {
		b := make([]byte, 1)
		n, _ := control.Read(b)
		if n == 1 {
			got <- b[0]
			return
		}
		got <- 0 // EOF: the parent is gone
	}()
	status.Write([]byte{'R'})
	status.Close()
	timer := time.NewTimer(time.Until(time.Unix(0, ns)))
	select {
	case b := <-got:
		if b == 'T' {
			return 0 // the parent thawed; a thaw now could undo someone else's freeze
		}
	case <-timer.C:
	}
	err = unix.IoctlSetInt(mpfd, FITHAW, 0)
	if err != nil && !errors.Is(err, unix.EINVAL) {
		// EINVAL means already thawed. Anything else: retry briefly, the
		// only thing that matters here is that the filesystem ends thawed.
		for i := 0; i < 10 && err != nil && !errors.Is(err, unix.EINVAL); i++ {
			time.Sleep(100 * time.Millisecond)
			err = unix.IoctlSetInt(mpfd, FITHAW, 0)
		}
	}
	if err != nil && !errors.Is(err, unix.EINVAL) {
		return 1
	}
	return 0
}

// Describe summarises a Request for reports.
func (r Request) Describe() string {
	return fmt.Sprintf("%s (watchdog deadline %v, protected: %s)", r.Mountpoint, r.Deadline, strings.Join(r.Protect, ","))
}
