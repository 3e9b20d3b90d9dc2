package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/freeze"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// GuardEnv, when set in the environment, turns guestcheck into a drill's
// guard: its value is the guard's spec (JSON).
const GuardEnv = "GUESTCHECK_DRILL_GUARD"

var (
	// guardGrace is how long past the drill's own deadline the guard
	// waits before it kills a drill that hangs and thaws itself.
	guardGrace = 30 * time.Second
	// guardPatience bounds the guard's thaw: reaching the agent again
	// and the thaw, which waits for a freeze still running in the guest
	// (a hook that sleeps).
	guardPatience = 5 * time.Minute
	// guardWait is how long the drill waits for its guard's thaw.
	guardWait = guardPatience + 10*time.Second
)

// Reach says how the guard reaches a VM's agent on a connection of its
// own: a chardev socket (--agent-socket, Proxmox), or a libvirt domain.
type Reach struct {
	Socket  string `json:"socket,omitempty"`
	Libvirt string `json:"libvirt,omitempty"`
	Domain  string `json:"domain,omitempty"`
}

func (r Reach) valid() bool { return r.Socket != "" || r.Libvirt != "" && r.Domain != "" }

// dial opens a new agent connection.
func (r Reach) dial(ctx context.Context) (fleet.Agent, error) {
	if r.Socket != "" {
		return qga.Dial(ctx, "unix", r.Socket)
	}
	ts, err := fleet.NewLibvirtSource(r.Libvirt).Targets(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.Name == r.Domain && t.Dial != nil {
			return t.Dial(ctx)
		}
	}
	return nil, fmt.Errorf("libvirt %s has no running domain %s with an agent", r.Libvirt, r.Domain)
}

// guardSpec is what the guard is told through GuardEnv.
type guardSpec struct {
	VM       string        `json:"vm"`
	Reach    Reach         `json:"reach"`
	Deadline int64         `json:"deadline_unix_nano"`
	Drill    int           `json:"drill_pid"`
	Patience time.Duration `json:"patience"`
}

// startGuard re-executes exe as the guard of vm (a freeze.Guard: its own
// session, the control pipe's read end at fd 3 and the status pipe at fd
// 4) and waits until it reports armed: from then on the drill's death,
// SIGKILL included, is the guard's EOF.
func startGuard(exe, vm string, r Reach, deadline time.Time) (*freeze.Guard, error) {
	if !r.valid() {
		return nil, errors.New("the source gives no way to reach the agent again")
	}
	spec, _ := json.Marshal(guardSpec{VM: vm, Reach: r, Deadline: deadline.UnixNano(), Drill: os.Getpid(), Patience: guardPatience})
	cmd := exec.Command(exe)
	cmd.Env = []string{GuardEnv + "=" + string(spec)}
	cmd.Stderr = os.Stderr
	return freeze.StartGuard(cmd, "the guard", 10*time.Second)
}

// abandon hands the thaw to the guard g and waits up to wait for it.
func abandon(g *freeze.Guard, wait time.Duration) error {
	exited, err := g.Abandon(wait)
	switch code, nonzero := freeze.ExitCode(err); {
	case !exited:
		return fmt.Errorf("the guard is still trying after %s, and keeps trying in the background", wait)
	case nonzero:
		return fmt.Errorf("the guard could not thaw either (exit %d; its line on stderr says why)", code)
	}
	return err
}

// IsGuard reports whether this process was started as a drill's guard;
// main must then call RunGuard before anything else.
func IsGuard() bool { return os.Getenv(GuardEnv) != "" }

// RunGuard is the guard's whole life: arm, then wait for "thawed" (exit),
// EOF (the drill died: thaw) or the deadline (kill the drill, whose
// connection holds the agent's one-client socket, then thaw). It returns
// the exit code.
func RunGuard() int {
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	var spec guardSpec
	if err := json.Unmarshal([]byte(os.Getenv(GuardEnv)), &spec); err != nil || !spec.Reach.valid() {
		return 2
	}
	const controlfd, statusfd = 3, 4
	control := os.NewFile(controlfd, "control")
	status := os.NewFile(statusfd, "status")
	got := make(chan byte, 1)
	go func() {
		b := make([]byte, 1)
		if n, _ := control.Read(b); n == 1 {
			got <- b[0]
			return
		}
		got <- 0 // EOF: the drill is gone
	}()
	status.Write([]byte{'R'})
	status.Close()
	timer := time.NewTimer(time.Until(time.Unix(0, spec.Deadline)))
	why := "the drill ended without thawing"
	select {
	case b := <-got:
		if b == 'T' {
			return 0 // thawed: a thaw now could undo a platform's own freeze
		}
	case <-timer.C:
		why = "the drill overran its deadline and was killed"
		syscall.Kill(spec.Drill, syscall.SIGKILL)
		select {
		case <-got:
		case <-time.After(10 * time.Second):
		}
	}
	n, err := guardThaw(spec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "guestcheck freeze-drill: %s, and its guard could not thaw %s: %v; thaw it by hand now (virsh domfsthaw, or guest-fsfreeze-thaw)\n", why, spec.VM, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "guestcheck freeze-drill: %s; its guard thawed %s (%d filesystem(s))\n", why, spec.VM, n)
	return 0
}

// guardThaw reaches the agent again, retrying while the drill's
// connection is still being closed, and thaws.
func guardThaw(spec guardSpec) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), max(spec.Patience, time.Second))
	defer cancel()
	var last error
	for ctx.Err() == nil {
		n, err := thawOnce(ctx, spec.Reach)
		if err == nil {
			return n, nil
		}
		last = err
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return 0, last
}

func thawOnce(ctx context.Context, r Reach) (int, error) {
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	a, err := r.dial(dctx)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	if dl, ok := ctx.Deadline(); ok {
		widen(a, time.Until(dl))
	}
	var n int
	if err := a.Exec(ctx, "guest-fsfreeze-thaw", nil, &n); err != nil {
		return 0, err
	}
	var st string
	if err := a.Exec(ctx, "guest-fsfreeze-status", nil, &st); err != nil {
		return 0, err
	}
	if st != "thawed" {
		return 0, fmt.Errorf("guest-fsfreeze-status says %q after the thaw", bounded(st, 40))
	}
	return n, nil
}
