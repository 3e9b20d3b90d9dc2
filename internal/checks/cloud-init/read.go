package cloudinit

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/boottime"
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/fact/instancedata"
	"github.com/guestcheck/guestcheck/internal/parse/cloudinitstatus"
	"github.com/guestcheck/guestcheck/internal/parse/procfs"
)

// ReadOptions says how to read a root.
type ReadOptions struct {
	// Live is true when the root is the running system, so that /proc and
	// /run describe this boot. Without it only files on disk are read.
	Live bool
	// Now is the wall clock; time.Now when nil.
	Now func() time.Time
}

// FileError is a file that exists but could not be read or parsed. It is
// not a problem.Problem: it has no line, and it keeps the cause as an
// error, because the remediation branches on it (errors.Is EACCES: run as
// root) and Wait returns it for callers to match with errors.As.
type FileError struct {
	// Path is the guest path.
	Path string
	// Err is the reason, without the path.
	Err error
}

// Error returns "path: reason".
func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FileError) Unwrap() error { return e.Err }

// Snapshot is everything read from a root in one pass.
type Snapshot struct {
	// Inputs feed Compute; Units are left nil for the caller to fill.
	Inputs Inputs
	// InstalledEvidence names what showed cloud-init is installed.
	InstalledEvidence string
	// InstanceData is nil when absent or broken.
	InstanceData *instancedata.Data
	// StatusErr, ResultErr and InstanceDataErr are set when that file
	// exists but cannot be read or parsed. With ResultErr set,
	// Inputs.ResultExists is still true, as cloud-init sees it.
	StatusErr, ResultErr, InstanceDataErr *FileError
	// Notes records inputs that could not be read but are not errors
	// (e.g. "/proc/uptime": "unreadable: ..."), for the report's detail.
	Notes map[string]string
}

// Usable reports whether status.json was readable (or is absent), which
// State needs to mean anything. A broken result.json does not matter here:
// cloud-init's status only tests that result.json exists, and judges the
// run and its errors from status.json alone, so State does the same.
func (s *Snapshot) Usable() bool { return s.StatusErr == nil }

// State computes the state from the snapshot's inputs.
func (s *Snapshot) State() *State { return Compute(s.Inputs) }

// installMarkers show that cloud-init is installed: its program or its
// first unit. /etc/cloud/cloud.cfg is not one: it is a configuration file
// that removing (not purging) the package leaves behind.
func installMarkers() []string {
	return []string{"/usr/bin/cloud-init", "/bin/cloud-init", "/usr/local/bin/cloud-init",
		"/usr/lib/systemd/system/cloud-init-local.service", "/lib/systemd/system/cloud-init-local.service"}
}

// Read gathers cloud-init's files from root. It never fails as a whole:
// per-file problems are in the snapshot, so that one broken file does not
// hide the rest.
func Read(root *fs.Root, opt ReadOptions) *Snapshot {
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	s := &Snapshot{Notes: map[string]string{}}
	s.readRunFiles(root)
	s.InstalledEvidence = installedEvidence(root, s)
	s.Inputs.Installed = s.InstalledEvidence != ""
	bi := BootInputs{
		MarkerFile:        root.Exists(DisabledMarkerPath),
		GeneratorDisabled: root.Exists(GeneratorDisabledPath),
		GeneratorEnabled:  root.Exists(GeneratorEnabledPath),
	}
	if opt.Live {
		s.readLiveBoot(root, &bi)
		s.Inputs.Clock = s.readClock(root, now)
	} else {
		s.Inputs.Clock = BootClock{Now: now()}
	}
	s.Inputs.Boot = DetectBootStatus(bi)
	s.readPersistent(root)
	return s
}

// readRunFiles reads and parses status.json, result.json and
// instance-data.json.
func (s *Snapshot) readRunFiles(root *fs.Root) {
	in := &s.Inputs
	in.Status, _, s.StatusErr = readParsed(root, StatusPath, cloudinitstatus.ParseStatus)
	// A result.json that cannot be read still exists, as cloud-init sees it.
	in.Result, in.ResultExists, s.ResultErr = readParsed(root, ResultPath, cloudinitstatus.ParseResult)
	s.InstanceData, s.InstanceDataErr = readInstanceData(root)
}

// readParsed reads p and parses it. exists is false only for a missing
// file; fe is set when p exists but cannot be read or parsed.
func readParsed[T any](root *fs.Root, p string, parse func([]byte) (*T, error)) (v *T, exists bool, fe *FileError) {
	b, ok, err := readOptional(root, p)
	switch {
	case err != nil:
		return nil, true, &FileError{p, err}
	case !ok:
		return nil, false, nil
	}
	if v, err = parse(b); err != nil {
		return nil, true, &FileError{p, err}
	}
	return v, true, nil
}

// readInstanceData reads the instance data through its one reader; absent
// is no error, as for the other optional files.
func readInstanceData(root *fs.Root) (*instancedata.Data, *FileError) {
	d, rerr, perr := instancedata.Read(root)
	switch {
	case errors.Is(rerr, iofs.ErrNotExist):
		return nil, nil
	case rerr != nil:
		return nil, &FileError{InstanceDataPath, stripPath(rerr)}
	case perr != nil:
		return nil, &FileError{InstanceDataPath, perr}
	}
	return d, nil
}

// installedEvidence names what shows cloud-init is installed: status.json,
// else the first install marker; "" when nothing does.
func installedEvidence(root *fs.Root, s *Snapshot) string {
	if s.Inputs.Status != nil || s.StatusErr != nil {
		return StatusPath
	}
	for _, p := range installMarkers() {
		if root.Exists(p) {
			return p
		}
	}
	return ""
}

// readLiveBoot adds what only the running system tells to the boot
// inputs: the init system, the kernel command line, PID 1's environment.
func (s *Snapshot) readLiveBoot(root *fs.Root, bi *BootInputs) {
	// cloud-init's uses_systemd(): /run/systemd/system is a directory.
	if st, err := root.Lstat("/run/systemd/system"); err != nil || !st.IsDir() {
		bi.Sysvinit = true
	}
	bi.Cmdline = s.readCmdline(root)
	// Needs root; unreadable simply means "not disabled this way".
	if b, err := root.ReadFile("/proc/1/environ"); err == nil {
		bi.Environment = environDisablesCloudInit(b)
	}
}

// readClock reads this boot's btime and uptime; what cannot be read is a
// note, and the clock knows less.
func (s *Snapshot) readClock(root *fs.Root, now func() time.Time) BootClock {
	var btime time.Time
	var uptime time.Duration
	var uptimeKnown bool
	if b, err := root.ReadFile("/proc/stat"); err != nil {
		s.Notes["/proc/stat"] = "unreadable: " + fileReason(err)
	} else if t, err := boottime.Parse(b); err != nil {
		s.Notes["/proc/stat"] = err.Error()
	} else {
		btime = t
	}
	if b, err := root.ReadFile("/proc/uptime"); err != nil {
		s.Notes["/proc/uptime"] = "unreadable: " + fileReason(err)
	} else if d, err := procfs.ParseUptime(b); err != nil {
		s.Notes["/proc/uptime"] = err.Error()
	} else {
		uptime, uptimeKnown = d, true
	}
	return NewBootClock(now(), btime, uptime, uptimeKnown)
}

// readPersistent looks at the files under /var/lib/cloud that survive a
// reboot, so that they can be told apart from this boot's result.
func (s *Snapshot) readPersistent(root *fs.Root) {
	if st, err := root.Stat(BootFinishedPath); err == nil && st.Mode().IsRegular() {
		ff := &FileFacts{Path: BootFinishedPath, ModTime: st.Mtime}
		if b, err := root.ReadFile(BootFinishedPath); err != nil {
			ff.ParseErr = stripPath(err)
		} else {
			ff.Content, ff.ParseErr = cloudinitstatus.ParseBootFinished(b)
		}
		s.Inputs.BootFinished = ff
	}
	if st, err := root.Stat(DataResultPath); err == nil && st.Mode().IsRegular() {
		s.Inputs.DataResult = &FileFacts{Path: DataResultPath, ModTime: st.Mtime}
	}
}

// readCmdline returns the kernel command line the way cloud-init's
// get_cmdline does: PID 1's arguments inside a container, /proc/cmdline
// otherwise.
func (s *Snapshot) readCmdline(root *fs.Root) string {
	if root.Exists("/run/systemd/container") {
		if b, err := root.ReadFile("/proc/1/cmdline"); err == nil {
			return strings.Join(procfs.ParseCmdline(b), " ")
		}
	}
	args, err := identity.ReadRunningCmdline(root)
	if err != nil {
		s.Notes[identity.RunningCmdlinePath] = "unreadable: " + fileReason(err)
		return ""
	}
	return args
}

// readOptional reads p; a missing file is ok=false without error.
func readOptional(root *fs.Root, p string) (b []byte, ok bool, err error) {
	b, err = root.ReadFile(p)
	switch {
	case err == nil:
		return b, true, nil
	case errors.Is(err, iofs.ErrNotExist):
		return nil, false, nil
	}
	return nil, false, stripPath(err)
}

// stripPath drops the path from a file error, since messages name the file
// themselves, and keeps the cause (an errno stays matchable with
// errors.Is): "permission denied", "is a directory".
func stripPath(err error) error {
	if errors.Is(err, fs.ErrTooLarge) {
		return fmt.Errorf("%w (over %d bytes)", fs.ErrTooLarge, fs.MaxFileSize)
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func fileReason(err error) string { return stripPath(err).Error() }
