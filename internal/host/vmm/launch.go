package vmm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/image"
)

// Sandbox is QEMU's seccomp filter: no obsolete system calls, no setuid
// or capabilities, no fork or exec, no scheduler or CPU affinity tuning.
const Sandbox = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"

// StderrLimit bounds what is kept of QEMU's own stderr.
const StderrLimit = 8 << 10

// Spec is one confined QEMU.
type Spec struct {
	// QEMU is the binary, Args its whole command line (BaseArgs first).
	QEMU string
	Args []string
	// Files are QEMU's descriptors 3 and up, in order.
	Files []*os.File
	// Jail is who QEMU runs as.
	Jail Jail
	// Stdin and Stdout are QEMU's (nil: /dev/null, discarded); the
	// appliance speaks through a socket instead.
	Stdin  io.Reader
	Stdout io.Writer
}

// Process is one running QEMU.
type Process struct {
	cmd    *exec.Cmd
	exited chan struct{}
	// waitErr is QEMU's exit status and the end of its stderr, nil for a
	// clean exit; set before exited closes.
	waitErr error
}

// Launch starts s.QEMU in its own process group (so that a kill takes
// all of it), killed by the kernel when sealprep dies (PR_SET_PDEATHSIG,
// set by Go after the credential change, which would clear it), as the
// jail's user with s.Files as its descriptors 3 and up.
//
// The privileges are dropped here, before exec, and never through
// QEMU's own -runas (7.2's; -run-with user= in later QEMUs): with
// those, QEMU parses its options and opens the disks, firmware, chardevs
// and sockets as root and changes user only just before the guest runs,
// so a hostile image and every path in the command line would still
// meet a root process.
func Launch(s Spec) (*Process, error) {
	p := &Process{exited: make(chan struct{})}
	p.cmd = exec.Command(s.QEMU, s.Args...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.Jail.cred}
	p.cmd.ExtraFiles = s.Files
	p.cmd.Stdin, p.cmd.Stdout = s.Stdin, s.Stdout
	// Once QEMU has exited, its output is read for half a second more at
	// most: a process that kept QEMU's stdout open must not keep Wait,
	// and the kill of the group that follows it, waiting.
	p.cmd.WaitDelay = 500 * time.Millisecond
	stderr := image.NewBoundedBuffer(StderrLimit)
	p.cmd.Stderr = stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.QEMU, err)
	}
	go func() {
		err := p.cmd.Wait()
		if s := stderr.String(); err != nil && s != "" {
			err = fmt.Errorf("%w: %s", err, FirstLines(s, 3))
		}
		p.waitErr = err
		close(p.exited)
	}()
	return p, nil
}

// Pid is QEMU's process ID (and its process group's).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// ExitErr is why QEMU stopped, for messages: its exit status and the
// start of its stderr, or "exited". Only after Exited is closed.
func (p *Process) ExitErr() error {
	if p.waitErr == nil {
		return errors.New("exited")
	}
	return p.waitErr
}

// Exited is closed once QEMU has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Wait waits for QEMU to exit by itself and returns its exit status
// with the start of its stderr, nil for a clean exit.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.exited:
		return p.waitErr
	case <-ctx.Done():
		return fmt.Errorf("QEMU still running: %w", ctx.Err())
	}
}

// Alive reports whether QEMU still runs.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Kill SIGKILLs QEMU's process group and waits (10 s at most) for QEMU.
func (p *Process) Kill() {
	if p.cmd.Process == nil {
		return
	}
	// The group, even when QEMU itself is gone: whatever it left in its
	// group goes too (a real QEMU, under spawn=deny, leaves nothing).
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
	}
}

// Terminate asks QEMU to quit with SIGTERM, on which it flushes its
// block devices (a qcow2's metadata included) and exits, and kills the
// process group when it has not exited within grace.
func (p *Process) Terminate(grace time.Duration) {
	if !p.Alive() || p.cmd.Process == nil {
		return
	}
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	p.Kill()
}

// FirstLines joins the first n lines of s with "; ", for one-line
// messages.
func FirstLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "; ")
}

// BaseArgs start every confined QEMU's command line: its name, the
// seccomp sandbox, the accelerator, size, no reboot (a guest's reboot or
// panic ends QEMU), no default devices, no display and no monitor.
func BaseArgs(name, accel string, memMiB, cpus int) []string {
	a := []string{
		"-name", name, "-sandbox", Sandbox, "-accel", accel,
		"-m", fmt.Sprint(memMiB), "-smp", fmt.Sprint(cpus),
		"-no-reboot", "-nodefaults", "-display", "none", "-monitor", "none",
	}
	if accel == AccelKVM {
		a = append(a, "-cpu", "host")
	}
	return a
}

// ChainArgs give QEMU a vetted chain (top first) as block nodes
// prefix-0 (the top) to prefix-N, each layer passed as a descriptor
// (-add-fd: layer i is descriptor firstFD+i, fd set i+1, read through
// /dev/fdset/i+1) and the graph spelled out with -blockdev, bottom first
// (a backing reference must name a node that exists): each qcow2
// layer's backing is the next layer, the bottom's none, whatever its
// header says. So QEMU opens no image path, by name or by a header's
// backing name. With writableTop the top layer is opened read-write
// (with discards passed down, for fstrim); every other layer is
// read-only.
func ChainArgs(layers []image.Layer, firstFD int, prefix string, writableTop bool) []string {
	var a []string
	for i := range layers {
		a = append(a, "-add-fd", fmt.Sprintf("fd=%d,set=%d,opaque=%s-%d", firstFD+i, i+1, prefix, i))
	}
	for i := len(layers) - 1; i >= 0; i-- {
		ro := !(writableTop && i == 0)
		file := map[string]any{"driver": "file", "filename": fmt.Sprintf("/dev/fdset/%d", i+1), "read-only": ro,
			"node-name": fmt.Sprintf("%s-file%d", prefix, i)}
		node := map[string]any{"driver": layers[i].Format, "file": fmt.Sprintf("%s-file%d", prefix, i), "read-only": ro,
			"node-name": fmt.Sprintf("%s-%d", prefix, i)}
		if !ro {
			file["discard"], node["discard"] = "unmap", "unmap"
		}
		// A raw layer has no backing option at all; qcow2's is the next
		// layer, or null (none) at the bottom.
		if layers[i].Format != "raw" {
			node["backing"] = nil
			if i+1 < len(layers) {
				node["backing"] = fmt.Sprintf("%s-%d", prefix, i+1)
			}
		}
		a = append(a, "-blockdev", JSONArg(file), "-blockdev", JSONArg(node))
	}
	return a
}

// JSONArg is a -blockdev style JSON option.
func JSONArg(v map[string]any) string {
	b, _ := json.Marshal(v) // maps of strings, bools and nil always marshal
	return string(b)
}

// CopyFileLimit copies src to a new file dst, failing when src holds
// more than limit bytes rather than leaving a truncated copy.
func CopyFileLimit(src, dst string, limit int64) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if err == nil && n > limit {
		err = fmt.Errorf("%s: larger than %d MiB", src, limit>>20)
	}
	if err != nil {
		out.Close()
		os.Remove(dst)
		return err
	}
	return out.Close()
}
