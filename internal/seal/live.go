package seal

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"golang.org/x/sys/unix"
)

// SystemLive is Live on the running system: systemd over D-Bus (or its
// private socket as root), journalctl for the journal, exec for hooks.
// Only sealprep's main constructs it, and only in live mode.
type SystemLive struct {
	// HookTimeout bounds each clean.d hook; 0 means 5 minutes.
	HookTimeout time.Duration
}

var _ Live = (*SystemLive)(nil)

// StopUnit stops a unit and waits for the job to finish.
func (s *SystemLive) StopUnit(ctx context.Context, name string) error {
	// The connection's ctx is its lifetime (godbus closes it when ctx
	// ends); the call itself is bounded by ctx below.
	life, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := sddbus.NewWithContext(life)
	if err != nil {
		return fmt.Errorf("stop %s: connect to systemd: %w", name, err)
	}
	defer c.Close()
	ch := make(chan string, 1)
	if _, err := c.StopUnitContext(ctx, name, "replace", ch); err != nil {
		return fmt.Errorf("stop %s: %w", name, err)
	}
	select {
	case res := <-ch:
		if res != "done" {
			return fmt.Errorf("stop %s: job %s", name, res)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop %s: %w", name, ctx.Err())
	}
}

// RelinquishJournal asks journald to write to /run/log/journal from now
// on, so that /var/log/journal can be removed under it.
func (s *SystemLive) RelinquishJournal(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, "journalctl", "--relinquish-var").CombinedOutput()
	if err != nil {
		return fmt.Errorf("journalctl --relinquish-var: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// RunHook runs one clean.d executable with no arguments.
func (s *SystemLive) RunHook(ctx context.Context, path string) error {
	d := s.HookTimeout
	if d <= 0 {
		d = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	out, err := exec.CommandContext(ctx, path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// PowerOff syncs and powers the machine off the way `systemctl poweroff
// --force` does: without stopping units, so that shutdown-time writers
// (systemd-random-seed's ExecStop, the utmp shutdown record, a journal
// flush) cannot recreate what was just removed.
func (s *SystemLive) PowerOff(ctx context.Context) error {
	unix.Sync()
	out, err := exec.CommandContext(ctx, "systemctl", "poweroff", "--force").CombinedOutput()
	if err != nil {
		return fmt.Errorf("systemctl poweroff --force: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
