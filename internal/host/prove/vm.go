package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/vmm"

	"github.com/digitalocean/go-qemu/qmp"
)

// VM is one running QEMU: a clone of prove's, or a guest of the VM test
// harness (test/vm), which boots through this same code.
type VM struct {
	clone  Clone
	proc   *vmm.Process
	exited <-chan struct{}
	mon    *vmm.Monitor
	monMu  sync.Mutex
	// events holds the first QMP event of each name, at most maxEvents
	// names however many events a guest provokes.
	evMu   sync.Mutex
	events map[string]qmp.Event
}

// maxEvents bounds the QMP event names kept (QEMU has about a hundred).
const maxEvents = 128

// Start runs QEMU (the binary qemu) for clone c booted as b with devices
// d (Args) through vmm.Launch, the one confined launcher, with the
// template chain's files as its descriptors 3 and up, and connects QMP.
// c's directory and files must be j's (Jail.Own, CreateOverlay,
// StageBoot).
func Start(ctx context.Context, qemu string, c Clone, b Boot, d Devices, j Jail) (*VM, error) {
	return start(ctx, qemu, c, Args(c, b, d), b.files(), j)
}

// start is Start with the command line given (tests add to it).
func start(ctx context.Context, qemu string, c Clone, args []string, files []*os.File, j Jail) (*VM, error) {
	p, err := vmm.Launch(vmm.Spec{QEMU: qemu, Args: args, Files: files, Jail: j})
	if err != nil {
		return nil, err
	}
	v := &VM{clone: c, proc: p, exited: p.Exited(), events: map[string]qmp.Event{}}
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
func (v *VM) exitErr() error { return v.proc.ExitErr() }

// connectQMP connects to QEMU's monitor, retrying while QEMU starts, and
// keeps the first event of each name.
func (v *VM) connectQMP(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	mon, err := vmm.WaitMonitor(wctx, v.clone.QMP(), v.exited)
	if err != nil {
		select {
		case <-v.exited:
			return fmt.Errorf("QEMU exited at start: %v", v.exitErr())
		default:
			return err
		}
	}
	v.mon = mon
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

// qmp runs one QMP command, giving up after d.
func (v *VM) qmp(cmd string, d time.Duration) ([]byte, error) {
	v.monMu.Lock()
	mon := v.mon
	v.monMu.Unlock()
	if mon == nil {
		return nil, fmt.Errorf("no QMP connection")
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return mon.RunContext(ctx, []byte(cmd))
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
		return fmt.Errorf("QMP query-status: %.200q", out)
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
	if err := v.proc.Wait(ctx); err != nil && ctx.Err() != nil && v.Alive() {
		return fmt.Errorf("%s: %w", v.clone.Name, err)
	} else {
		return err
	}
}

// Alive reports whether QEMU still runs.
func (v *VM) Alive() bool { return v.proc.Alive() }

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
	v.proc.Kill()
	v.monMu.Lock()
	if v.mon != nil {
		v.mon.Disconnect()
		v.mon = nil
	}
	v.monMu.Unlock()
}
