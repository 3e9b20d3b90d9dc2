package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/digitalocean/go-qemu/qmp"

	"github.com/guestcheck/guestcheck/internal/host/image"
)

// vm is one running QEMU.
type vm struct {
	clone  Clone
	cmd    *exec.Cmd
	exited chan struct{}
	// exitErr is QEMU's exit and the end of its stderr, set before
	// exited closes.
	exitErr error
	mon     *qmp.SocketMonitor
	monMu   sync.Mutex
}

// stderrLimit bounds what is kept of QEMU's own stderr.
const stderrLimit = 8 << 10

// start runs QEMU for the clone in its own process group (so that a
// kill takes all of it), as the jail's user with files as its
// descriptors 3 and up, and connects QMP.
//
// The privileges are dropped here, before exec, and never through
// QEMU's own -runas (7.2's; -run-with user= in later QEMUs): with
// those, QEMU parses its options and opens the disks, firmware, chardevs
// and sockets as root and changes user only just before the guest runs, so a hostile template and
// every path in the command line would still meet a root process.
func start(ctx context.Context, qemu string, c Clone, args []string, files []*os.File, j jail) (*vm, error) {
	v := &vm{clone: c, exited: make(chan struct{})}
	v.cmd = exec.Command(qemu, args...)
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: j.cred}
	v.cmd.ExtraFiles = files
	stderr := image.NewBoundedBuffer(stderrLimit)
	v.cmd.Stderr = stderr
	if err := v.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", qemu, err)
	}
	go func() {
		err := v.cmd.Wait()
		if s := stderr.String(); err != nil && s != "" {
			err = fmt.Errorf("%w: %s", err, firstLines(s, 3))
		} else if err == nil {
			err = fmt.Errorf("exited")
		}
		v.exitErr = err
		close(v.exited)
	}()
	if err := v.connectQMP(ctx); err != nil {
		v.kill()
		return nil, err
	}
	if err := v.running(); err != nil {
		v.kill()
		return nil, err
	}
	return v, nil
}

func firstLines(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[:n]
	}
	return strings.Join(l, "; ")
}

// connectQMP connects to QEMU's monitor, retrying while QEMU starts, and
// drains its events (go-qemu blocks when nobody reads them).
func (v *vm) connectQMP(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		mon, err := qmp.NewSocketMonitor("unix", v.clone.QMP(), 2*time.Second)
		if err == nil {
			if err = mon.Connect(); err == nil {
				v.mon = mon
				break
			}
		}
		select {
		case <-v.exited:
			return fmt.Errorf("QEMU exited at start: %v", v.exitErr)
		case <-ctx.Done():
			return fmt.Errorf("QMP %s: %w", v.clone.QMP(), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("QMP %s: %v", v.clone.QMP(), err)
		}
	}
	evs, err := v.mon.Events(context.Background())
	if err != nil {
		return fmt.Errorf("QMP events: %w", err)
	}
	go func() {
		for range evs {
		}
	}()
	return nil
}

// qmp runs one QMP command with a deadline (go-qemu's Run has none).
func (v *vm) qmp(cmd string, d time.Duration) ([]byte, error) {
	v.monMu.Lock()
	mon := v.mon
	v.monMu.Unlock()
	if mon == nil {
		return nil, fmt.Errorf("no QMP connection")
	}
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := mon.Run([]byte(cmd))
		ch <- res{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(d):
		return nil, fmt.Errorf("QMP %s: no answer in %s", cmd, d)
	}
}

// running reports whether QMP says the guest runs.
func (v *vm) running() error {
	out, err := v.qmp(`{"execute":"query-status"}`, 10*time.Second)
	if err != nil {
		return err
	}
	var st struct {
		Return struct {
			Status string `json:"status"`
		} `json:"return"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Return.Status != "running" {
		return fmt.Errorf("QMP query-status: %.200s", out)
	}
	return nil
}

// alive reports whether QEMU still runs.
func (v *vm) alive() bool {
	select {
	case <-v.exited:
		return false
	default:
		return true
	}
}

// stop asks QEMU to quit over QMP (the clone is thrown away, so there is
// no guest shutdown to wait for) and kills it when it does not exit
// within 10 s.
func (v *vm) stop() {
	if v.alive() {
		v.qmp(`{"execute":"quit"}`, 5*time.Second)
		select {
		case <-v.exited:
		case <-time.After(10 * time.Second):
		}
	}
	v.kill()
}

// kill SIGKILLs QEMU's process group and waits for it.
func (v *vm) kill() {
	if v.alive() && v.cmd.Process != nil {
		syscall.Kill(-v.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-v.exited:
		case <-time.After(10 * time.Second):
		}
	}
	v.monMu.Lock()
	if v.mon != nil {
		v.mon.Disconnect()
		v.mon = nil
	}
	v.monMu.Unlock()
}
