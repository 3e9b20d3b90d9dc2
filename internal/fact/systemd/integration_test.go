package systemd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"

	godbus "github.com/godbus/dbus/v5"
)

// busConfig is a minimal bus with no service directories, so nothing can be
// activated on it: a bus without systemd, as in a container.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%SOCKET%</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// startBus runs a private dbus-daemon and returns its address; the daemon is
// killed in t.Cleanup.
func startBus(t *testing.T) string {
	t.Helper()
	dbusDaemon := testenv.Tool(t, "dbus-daemon", "dbus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bus.conf")
	conf := strings.ReplaceAll(busConfig, "%SOCKET%", filepath.Join(dir, "bus"))
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(dbusDaemon, "--config-file="+cfg, "--nofork", "--nopidfile", "--print-address")
	// Kept for failures only: as root it always warns about the fd limit.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("dbus-daemon stderr:\n%s", stderr.String())
		}
	})

	// The address is printed once the daemon listens.
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	select {
	case a := <-addr:
		if a == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not print its address within 10s")
	}
	return ""
}

// TestBusWithoutSystemd goes through the production dial (go-systemd's
// NewSystemConnectionContext, pointed at the private bus by
// DBUS_SYSTEM_BUS_ADDRESS) and checks that a bus with nobody owning
// org.freedesktop.systemd1 reads as ErrNotRunning.
func TestBusWithoutSystemd(t *testing.T) {
	addr := startBus(t)
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
	c := New(true)
	c.runDir = t.TempDir() // pretend to be booted with systemd
	// As root the dial tries PID 1's private socket first: a missing one,
	// so this machine's systemd (if any) is not asked.
	c.dial = dialSystem(filepath.Join(t.TempDir(), "private"))
	t.Cleanup(func() { _ = c.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Units(ctx, "dbus.service")
	if !errors.Is(err, ErrNotRunning) {
		t.Fatalf("err = %v, want ErrNotRunning", err)
	}
	var de godbus.Error
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a godbus Error inside", err)
	}
	t.Logf("bus without systemd: %v", err)
	// The manager-wide calls give the same answer.
	if _, err := c.State(ctx); !errors.Is(err, ErrNotRunning) {
		t.Errorf("State err = %v, want ErrNotRunning", err)
	}
	if _, err := c.Jobs(ctx); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Jobs err = %v, want ErrNotRunning", err)
	}
	if _, err := c.LoadedUnits(ctx); !errors.Is(err, ErrNotRunning) {
		t.Errorf("LoadedUnits err = %v, want ErrNotRunning", err)
	}
}
