package appliance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/host/image"
	"github.com/guestcheck/guestcheck/internal/host/vmm"
)

// Defaults of an appliance run.
const (
	// DefaultMemoryMiB is the appliance's memory: sealprep and the
	// filesystems' caches; QEMU can use no more for the guest.
	DefaultMemoryMiB = 512
	// DefaultTimeout is the whole run's deadline under TCG: a boot of
	// seconds and a seal of a large image; then QEMU's process group is
	// killed.
	DefaultTimeout = 20 * time.Minute
)

// Config is one appliance run.
type Config struct {
	// QEMU is qemu-system-x86_64's path.
	QEMU string
	// Kernel is the appliance's kernel, Init the static sealprep binary
	// that is its /init, CacheDir where initramfs images are kept.
	Kernel   Kernel
	Init     string
	CacheDir string
	// Accel is kvm or tcg (vmm.ChooseAccel).
	Accel     string
	MemoryMiB int
	// Layers is the vetted chain, top first; Write opens the top
	// read-write (apply), every other layer read-only.
	Layers []image.Layer
	Write  bool
	// FSTypes are the image's filesystem types (image.ScanChain): the
	// initramfs gets their modules.
	FSTypes []string
	// Job is what the appliance is to do (sealprep's, opaque here).
	Job []byte
	// Timeout is the deadline of the whole run (DefaultTimeout if 0).
	Timeout time.Duration
	// Confirm answers a confirm message with the plan: true goes on.
	Confirm func(plan []byte) bool
	// Progress receives the appliance's progress lines, cleaned.
	Progress func(line string)
	// Jail is who QEMU runs as (vmm.NewJail).
	Jail vmm.Jail
}

// Result is what came back.
type Result struct {
	// Report is the report message's report, its strings cleaned; Exit
	// the exit code the appliance gave it.
	Report []byte
	Exit   int
	// Duration is from QEMU's start to its end, Boot to the appliance's
	// ready message (its kernel booted and its modules loaded).
	Duration, Boot time.Duration
	// Modules are the modules the initramfs held, Initramfs its cache file.
	Modules   []string
	Initramfs string
}

// Error is an appliance that did not bring back a whole report: why, and
// the end of its console.
type Error struct {
	Why     string
	Console []string
}

func (e *Error) Error() string {
	if len(e.Console) == 0 {
		return e.Why
	}
	return e.Why + "; its console ended with: " + strings.Join(e.Console, " | ")
}

// terminateGrace is how long QEMU has to flush and quit on SIGTERM.
const terminateGrace = 10 * time.Second

// consoleLines are how many of the console's last lines an Error keeps.
const consoleLines = 4

// Run boots the appliance on cfg's image and returns its report. It
// returns only once QEMU has exited: at the appliance's power-off, at
// the deadline, or when ctx ends (the whole process group is killed).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MemoryMiB == 0 {
		cfg.MemoryMiB = DefaultMemoryMiB
	}
	mods, err := cfg.Kernel.ModulesFor(cfg.FSTypes)
	if err != nil {
		return Result{}, err
	}
	base, err := BuildInitramfs(cfg.CacheDir, cfg.Init, cfg.Kernel, mods)
	if err != nil {
		return Result{}, err
	}
	res := Result{Modules: mods, Initramfs: base}
	job, err := JobArchive(cfg.Job)
	if err != nil {
		return res, err
	}
	// The kernel and initramfs QEMU reads are files of its own user's,
	// with no name: nothing of root's is opened by path, and a SIGKILL
	// leaves no temporary file behind.
	kernel, err := stage(cfg.Jail, cfg.Kernel.Path)
	if err != nil {
		return res, err
	}
	defer kernel.Close()
	initrd, err := stage(cfg.Jail, base, job)
	if err != nil {
		return res, err
	}
	defer initrd.Close()
	conn, qemuEnd, err := portPair()
	if err != nil {
		return res, err
	}
	defer conn.Close()
	files, args, err := launchArgs(cfg, kernel, initrd, qemuEnd)
	if err != nil {
		qemuEnd.Close()
		return res, err
	}
	console := &tail{max: 16 << 10}
	start := time.Now()
	p, err := vmm.Launch(vmm.Spec{QEMU: cfg.QEMU, Args: args, Files: files, Jail: cfg.Jail, Stdout: console})
	qemuEnd.Close()
	for _, f := range files[len(cfg.Layers):] {
		f.Close()
	}
	if cfg.Write && len(files) > 0 {
		files[0].Close() // the read-write reopening of the top layer
	}
	if err != nil {
		return res, err
	}
	defer p.Kill()
	got := make(chan converse, 1)
	go func() { got <- talk(conn, cfg, start) }()
	deadline := time.NewTimer(cfg.Timeout)
	defer deadline.Stop()
	fail := func(why string) (Result, error) {
		// SIGTERM first: QEMU flushes the image (a qcow2's metadata
		// stays consistent) before it goes; the guest's filesystems
		// are journalled, and every action of the executor is safe to
		// run again.
		p.Terminate(terminateGrace)
		res.Duration = time.Since(start)
		return res, &Error{Why: why, Console: console.lines(consoleLines)}
	}
	select {
	case <-p.Exited():
	case <-deadline.C:
		return fail(fmt.Sprintf("the appliance did not finish within %s; QEMU was killed", cfg.Timeout))
	case <-ctx.Done():
		return fail(fmt.Sprintf("the appliance was stopped: %v", ctx.Err()))
	}
	res.Duration = time.Since(start)
	// QEMU's end closes its end of the port: talk returns.
	var c converse
	select {
	case c = <-got:
	case <-time.After(5 * time.Second):
		conn.Close()
		c = <-got
	}
	if err := p.Wait(context.Background()); err != nil {
		return res, &Error{Why: fmt.Sprintf("QEMU failed: %v", err), Console: console.lines(consoleLines)}
	}
	if err := c.verdict(); err != nil {
		return res, &Error{Why: err.Error(), Console: console.lines(consoleLines)}
	}
	res.Report, res.Exit, res.Boot = c.report, *c.exit, c.boot
	return res, nil
}

// portPair is the port's socket pair: the host's end as a connection,
// QEMU's as the file it inherits.
func portPair() (net.Conn, *os.File, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	hostEnd := os.NewFile(uintptr(pair[0]), "appliance-port")
	qemuEnd := os.NewFile(uintptr(pair[1]), "appliance-port-qemu")
	conn, err := net.FileConn(hostEnd)
	hostEnd.Close()
	if err != nil {
		qemuEnd.Close()
		return nil, nil, err
	}
	return conn, qemuEnd, nil
}

// converse is what the appliance said.
type converse struct {
	// boot is from QEMU's start to the ready message.
	boot   time.Duration
	report []byte
	exit   *int
	done   *int
	errMsg string
	err    error
}

// verdict says whether the appliance brought back a whole report: a
// report, then done with the same exit code (everything was unmounted
// and flushed), and nothing wrong with the stream.
func (c converse) verdict() error {
	switch {
	case c.errMsg != "":
		return errors.New(c.errMsg)
	case c.err != nil && c.report == nil:
		return fmt.Errorf("the appliance's report could not be read: %v", c.err)
	case c.report == nil:
		return errors.New("the appliance ended without a report")
	case c.err != nil:
		return fmt.Errorf("the appliance's messages after its report could not be read: %v", c.err)
	case c.done == nil:
		return errors.New("the appliance ended after its report without saying that the image was unmounted and flushed")
	case *c.done != *c.exit:
		return fmt.Errorf("the appliance's report ended with exit code %d, its last message with %d", *c.exit, *c.done)
	}
	return nil
}

// talk reads the appliance's messages until the port closes, answering
// a confirm and passing progress on.
func talk(conn net.Conn, cfg Config, start time.Time) converse {
	var c converse
	r := newMessageReader(conn)
	for {
		m, err := r.next()
		if err == io.EOF {
			return c
		}
		if err != nil {
			c.err = err
			return c
		}
		switch {
		case c.done != nil:
			c.err = errors.New("a message after the last one")
			return c
		case m.Type == MsgProgress:
			if cfg.Progress != nil {
				cfg.Progress(m.Text)
			}
		case m.Type == MsgConfirm:
			answer := "no\n"
			if cfg.Confirm != nil && c.report == nil && cfg.Confirm(m.Report) {
				answer = "yes\n"
			}
			conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(conn, answer); err != nil {
				c.err = err
				return c
			}
		case m.Type == MsgReport:
			if c.report != nil {
				c.err = errors.New("a second report")
				return c
			}
			c.report, c.exit = m.Report, m.Exit
		case m.Type == MsgError:
			c.errMsg = "the appliance could not seal the image: " + m.Text
		case m.Type == MsgDone:
			c.done = m.Exit
		case m.Type == MsgReady:
			if c.boot == 0 {
				c.boot = time.Since(start)
			}
		}
	}
}

// stage copies the files into one unnamed file (O_TMPFILE) owned by the
// jail's user, mode 0600, and returns it open for reading.
func stage(j vmm.Jail, srcs ...any) (*os.File, error) {
	f, err := tmpFile()
	if err != nil {
		return nil, err
	}
	for _, s := range srcs {
		switch v := s.(type) {
		case string:
			in, err := os.Open(v)
			if err != nil {
				f.Close()
				return nil, err
			}
			_, err = io.Copy(f, io.LimitReader(in, 1<<30))
			in.Close()
			if err != nil {
				f.Close()
				return nil, err
			}
		case []byte:
			if _, err := f.Write(v); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	if j.Dropped() {
		if err := f.Chown(j.UID(), j.GID()); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// tmpFile is an unnamed file in /run or the temporary directory, or,
// where the filesystem has no O_TMPFILE, a named one removed at once.
func tmpFile() (*os.File, error) {
	for _, d := range []string{"/run", os.TempDir()} {
		fd, err := unix.Open(d, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err == nil {
			return os.NewFile(uintptr(fd), filepath.Join(d, "(sealprep appliance file)")), nil
		}
	}
	f, err := os.CreateTemp("", "sealprep-appliance-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return f, nil
}

// launchArgs are QEMU's descriptors and command line: the layers first
// (descriptors 3 and up; the top reopened read-write for a seal), then
// the kernel, the initramfs and the port's socket. There is no network
// device, and the console is QEMU's stdout.
func launchArgs(cfg Config, kernel, initrd, port *os.File) ([]*os.File, []string, error) {
	var files []*os.File
	for _, l := range cfg.Layers {
		files = append(files, l.File)
	}
	if cfg.Write && len(files) > 0 {
		rw, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", files[0].Fd()), os.O_RDWR, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("the image file cannot be opened for writing (%v): seal a writable copy", err)
		}
		files[0] = rw
	}
	fd := func(f *os.File) string {
		files = append(files, f)
		return fmt.Sprintf("/proc/self/fd/%d", 2+len(files))
	}
	accel := cfg.Accel
	if accel == vmm.AccelTCG {
		// TCG's translated-code cache defaults to a quarter of the
		// host's memory at most, 1 GiB; 32 MiB holds what a kernel,
		// sealprep and a seal run, and is most of QEMU's memory saved.
		accel += ",tb-size=32"
	}
	args := vmm.BaseArgs("sealprep-appliance", accel, cfg.MemoryMiB, 1)
	args = append(args,
		"-nic", "none",
		// Entropy from the host (getrandom(2), no file opened): without
		// it the appliance's kernel waits a second or more for its
		// random pool before sealprep's first random byte.
		"-object", "rng-builtin,id=rng0", "-device", "virtio-rng-pci,rng=rng0",
		"-kernel", fd(kernel), "-initrd", fd(initrd),
		"-append", "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init",
		"-serial", "stdio",
	)
	portFD := 2 + len(files) + 1
	files = append(files, port)
	args = append(args, vmm.ChainArgs(cfg.Layers, 3, "img", cfg.Write)...)
	args = append(args,
		"-device", "virtio-blk-pci,drive=img-0,serial=sealprep-image",
		"-device", "virtio-serial-pci",
		"-chardev", fmt.Sprintf("socket,id=port0,fd=%d", portFD),
		"-device", "virtserialport,chardev=port0,name="+PortName,
	)
	return files, args, nil
}
