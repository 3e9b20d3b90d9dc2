package freeze

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Guard is a process that undoes a freeze when the process that froze
// dies: guestcheck --freeze-test's watchdog in the guest, and
// guestcheck freeze-drill's guard on the host. It runs in its own
// session, so that a Ctrl-C or a kill of its parent's process group does
// not reach it, and reads a control pipe whose write end only the parent
// holds (close-on-exec): "T" means the freeze is over; EOF without it,
// the parent's death (SIGKILL included), means undo it now.
type Guard struct {
	cmd     *exec.Cmd
	control *os.File
	exited  chan error
}

// StartGuard starts cmd as a guard: in its own session, with cmd's
// ExtraFiles first, then the control pipe's read end and a status pipe's
// write end (so at descriptors 3+len(ExtraFiles) and the next), and
// waits up to arm for the guard to write "R" on the status pipe. The
// ExtraFiles given are handed over: closed here once cmd has started.
// name says what the guard is, in errors ("the guard").
func StartGuard(cmd *exec.Cmd, name string, arm time.Duration) (*Guard, error) {
	handed := cmd.ExtraFiles
	defer func() {
		for _, f := range handed {
			f.Close()
		}
	}()
	cr, cw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	sr, sw, err := os.Pipe()
	if err != nil {
		cr.Close()
		cw.Close()
		return nil, err
	}
	defer sr.Close()
	cmd.ExtraFiles = append(append([]*os.File(nil), handed...), cr, sw)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	cr.Close()
	sw.Close()
	if err != nil {
		cw.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	g := &Guard{cmd: cmd, control: cw, exited: make(chan error, 1)}
	go func() { g.exited <- cmd.Wait() }()
	sr.SetReadDeadline(time.Now().Add(arm))
	buf := make([]byte, 1)
	if n, err := sr.Read(buf); n != 1 || buf[0] != 'R' {
		g.Done()
		return nil, fmt.Errorf("%s did not arm: %v", name, err)
	}
	return g, nil
}

// Done tells the guard the freeze is over and reaps it, waiting at most
// 5 seconds: it is never killed, since it may still have to undo the
// freeze, and it exits on its own.
func (g *Guard) Done() {
	g.control.Write([]byte{'T'})
	g.control.Close()
	select {
	case <-g.exited:
	case <-time.After(5 * time.Second):
	}
}

// Abandon hands the freeze to the guard (the control pipe closes without
// "T") and waits up to wait for it to exit. exited is false when it is
// still at work then; err is its exit error.
func (g *Guard) Abandon(wait time.Duration) (exited bool, err error) {
	g.control.Close()
	select {
	case err := <-g.exited:
		return true, err
	case <-time.After(wait):
		return false, nil
	}
}

// ExitCode is err's exit status when err says the guard exited non-zero.
func ExitCode(err error) (int, bool) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), true
	}
	return 0, false
}
