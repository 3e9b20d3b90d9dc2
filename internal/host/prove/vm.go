package prove

import (
	"context"
	"encoding/json"
	"errors"
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

// VM is one running QEMU: a clone of prove's, or a guest of the VM test
// harness (test/vm), which boots through this same code.
type VM struct {
	clone  Clone
	cmd    *exec.Cmd
	exited chan struct{}
	// waitErr is QEMU's exit status and the end of its stderr, nil for
	// a clean exit; set before exited closes.
	waitErr error
	mon     *qmp.SocketMonitor
	monMu   sync.Mutex
	// events holds the first QMP event of each name, at most maxEvents
	// names however many events a guest provokes.
	evMu   sync.Mutex
	events map[string]qmp.Event
}

// maxEvents bounds the QMP event names kept (QEMU has about a hundred).
const maxEvents = 128

// stderrLimit bounds what is kept of QEMU's own stderr.
const stderrLimit = 8 << 10

// Start runs QEMU (the binary qemu) for clone c booted as b with devices
// d (Args), in its own process group (so that a kill takes all of it),
// as the jail's user with the template chain's files as its descriptors
// 3 and up, and connects QMP. c's directory and files must be j's
// (Jail.Own, CreateOverlay, StageBoot).
//
// The privileges are dropped here, before exec, and never through
// QEMU's own -runas (7.2's; -run-with user= in later QEMUs): with
// those, QEMU parses its options and opens the disks, firmware, chardevs
// and sockets as root and changes user only just before the guest runs, so a hostile template and
// every path in the command line would still meet a root process.
func Start(ctx context.Context, qemu string, c Clone, b Boot, d Devices, j Jail) (*VM, error) {
	return start(ctx, qemu, c, Args(c, b, d), b.files(), j)
}

// start is Start with the command line given (tests add to it).
func start(ctx context.Context, qemu string, c Clone, args []string, files []*os.File, j Jail) (*VM, error) {
	v := &VM{clone: c, exited: make(chan struct{}), events: map[string]qmp.Event{}}
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
		}
		v.waitErr = err
		close(v.exited)
	}()
	if err := v.connectQMP(ctx); err != nil {
		v.Kill()
		return nil, err
	}
	if err := v.running(); err != nil {
		v.Kill()
		return nil, err
	}
	return v, nil
}

// exitErr is why QEMU stopped, for messages: its exit status and
// stderr, or "exited".
func (v *VM) exitErr() error {
	if v.waitErr == nil {
		return errors.New("exited")
	}
	return v.waitErr
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
func (v *VM) connectQMP(ctx context.Context) error {
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
			return fmt.Errorf("QEMU exited at start: %v", v.exitErr())
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
		for e := range evs {
			v.evMu.Lock()
			if _, ok := v.events[e.Event]; !ok && len(v.events) < maxEvents {
				v.events[e.Event] = e
			}
			v.evMu.Unlock()
		}
	}()
	return nil
}

// qmp runs one QMP command with a deadline (go-qemu's Run has none).
func (v *VM) qmp(cmd string, d time.Duration) ([]byte, error) {
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
func (v *VM) running() error {
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

// Event returns the first QMP event named name seen so far (SHUTDOWN
// tells whether the guest powered itself off).
func (v *VM) Event(name string) (qmp.Event, bool) {
	v.evMu.Lock()
	defer v.evMu.Unlock()
	e, ok := v.events[name]
	return e, ok
}

// Exited is closed once QEMU has exited.
func (v *VM) Exited() <-chan struct{} { return v.exited }

// Wait waits for QEMU to exit by itself and returns its exit status
// with the end of its stderr, nil for a clean exit.
func (v *VM) Wait(ctx context.Context) error {
	select {
	case <-v.exited:
		return v.waitErr
	case <-ctx.Done():
		return fmt.Errorf("%s: QEMU still running: %w", v.clone.Name, ctx.Err())
	}
}

// Alive reports whether QEMU still runs.
func (v *VM) Alive() bool {
	select {
	case <-v.exited:
		return false
	default:
		return true
	}
}

// Stop asks QEMU to quit over QMP (the clone is thrown away, so there is
// no guest shutdown to wait for) and kills it when it does not exit
// within 10 s.
func (v *VM) Stop() {
	if v.Alive() {
		v.qmp(`{"execute":"quit"}`, 5*time.Second)
		select {
		case <-v.exited:
		case <-time.After(10 * time.Second):
		}
	}
	v.Kill()
}

// Kill SIGKILLs QEMU's process group and waits for it.
func (v *VM) Kill() {
	if v.Alive() && v.cmd.Process != nil {
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
