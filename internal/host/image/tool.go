package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Limits bound a helper process that reads a hostile image: address
// space and CPU through prlimit(1) (set before the helper's first
// instruction, unlike a prlimit(2) after start), a wall-clock deadline,
// and how much of its output is kept.
type Limits struct {
	AddressSpace uint64
	CPU          time.Duration
	Deadline     time.Duration
	MaxOutput    int
}

// Limits of sealprep's helpers. qemu-img's are OpenStack's for qemu-img
// info after CVE-2015-5162 (1 GiB, 30 s of CPU); the storage daemon lives
// for a whole seal, so it gets more of both, but still a bound.
var (
	QemuImgLimits = Limits{AddressSpace: 1 << 30, CPU: 30 * time.Second, Deadline: 60 * time.Second, MaxOutput: 1 << 20}
	DaemonLimits  = Limits{AddressSpace: 8 << 30, CPU: 2 * time.Hour, MaxOutput: 64 << 10}
)

// BoundedBuffer keeps the first bytes written to it, up to its bound,
// and says whether more came: for a helper's output, which is hostile
// input (qemu-img's, the storage daemon's, prove's QEMU's).
type BoundedBuffer struct {
	mu   sync.Mutex
	b    []byte
	max  int
	over bool
}

// Write keeps what fits and reports all of p as taken.
func (w *BoundedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	room := w.max - len(w.b)
	if len(p) > room {
		w.over = true
		p = p[:max(room, 0)]
	}
	w.b = append(w.b, p...)
	// The writer is told everything was taken, so the helper is not
	// stopped by a short write; over records the cut.
	return n, nil
}

// NewBoundedBuffer keeps at most max bytes.
func NewBoundedBuffer(max int) *BoundedBuffer { return &BoundedBuffer{max: max} }

// Bytes is what was kept.
func (w *BoundedBuffer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]byte(nil), w.b...)
}

// String is the kept text, trimmed.
func (w *BoundedBuffer) String() string { return strings.TrimSpace(string(w.Bytes())) }

// limitedCommand is bin run under prlimit with l's address space and CPU
// bounds, in its own process group, with files as fds 3, 4, ... (name
// them /proc/self/fd/N: the helper then reads exactly the inode that was
// vetted, never a path that could have been swapped since).
func limitedCommand(l Limits, bin string, args []string, files []*os.File) (*exec.Cmd, error) {
	pl, err := exec.LookPath("prlimit")
	if err != nil {
		return nil, fmt.Errorf("prlimit is missing (Debian package util-linux); sealprep bounds the tools that read an image with it")
	}
	// A stack limit of 2 MiB is also every thread's default stack size
	// (glibc takes it from RLIMIT_STACK): with 8 MiB each, the worker
	// threads a loaded host makes QEMU's thread pool start used up the
	// address space and qemu-img aborted in qemu_thread_create.
	full := []string{"--core=0", "--stack=2097152"}
	if l.AddressSpace > 0 {
		full = append(full, fmt.Sprintf("--as=%d", l.AddressSpace))
	}
	if l.CPU > 0 {
		full = append(full, fmt.Sprintf("--cpu=%d", int64(l.CPU/time.Second)))
	}
	full = append(full, "--", bin)
	c := exec.Command(pl, append(full, args...)...)
	// One malloc arena: glibc gives a thread that finds the arena locked
	// one of its own, reserving 64-128 MiB of address space each (up to
	// 8 per CPU). On a loaded host qemu-img's few threads contend, and
	// their arenas, not their stacks, took it past 1 GiB: 8% of qemu-img
	// dd runs aborted in qemu_thread_create with 2 MiB stacks, none with
	// one arena.
	c.Env = append(os.Environ(), "MALLOC_ARENA_MAX=1")
	c.ExtraFiles = files
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return c, nil
}

// runLimited runs bin to its end under l: its output bounded, killed
// (the whole process group) at the deadline or when ctx ends.
func runLimited(ctx context.Context, l Limits, bin string, args []string, files []*os.File) (stdout []byte, stderr string, err error) {
	c, err := limitedCommand(l, bin, args, files)
	if err != nil {
		return nil, "", err
	}
	out := NewBoundedBuffer(l.MaxOutput)
	errb := NewBoundedBuffer(64 << 10)
	c.Stdout, c.Stderr = out, errb
	if err := c.Start(); err != nil {
		return nil, "", fmt.Errorf("start %s: %w", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var deadline <-chan time.Time
	if l.Deadline > 0 {
		t := time.NewTimer(l.Deadline)
		defer t.Stop()
		deadline = t.C
	}
	select {
	case err = <-done:
	case <-deadline:
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		return nil, errb.String(), fmt.Errorf("%s did not finish within %s; killed", bin, l.Deadline)
	case <-ctx.Done():
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		<-done
		return nil, errb.String(), ctx.Err()
	}
	if out.over {
		return nil, errb.String(), fmt.Errorf("%s wrote more than %d bytes; stopped reading it", bin, l.MaxOutput)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil, errb.String(), fmt.Errorf("%s was killed by %v (a limit: %s of address space, %s of CPU)", bin, ws.Signal(), human(l.AddressSpace), l.CPU)
		}
	}
	return out.Bytes(), errb.String(), err
}
