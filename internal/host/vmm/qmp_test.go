package vmm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digitalocean/go-qemu/qmp"
	"github.com/digitalocean/go-qemu/qmp/raw"
)

const greeting = `{"QMP": {"version": {"qemu": {"micro": 0, "minor": 2, "major": 7}, "package": "Debian 1:7.2"}, "capabilities": ["oob"]}}`

// fakeQEMU serves one QMP connection at a socket in t's directory: it
// sends the greeting, then answers each command with what answer
// returns for it (lines written in one write, with \r\n as QEMU ends
// them); answer gets the command and its id as JSON.
func fakeQEMU(t *testing.T, answer func(cmd string, id json.RawMessage) []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "qmp.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(c, "%s\r\n", greeting)
		s := bufio.NewScanner(c)
		for s.Scan() {
			var cmd struct {
				Execute string          `json:"execute"`
				ID      json.RawMessage `json:"id"`
			}
			if json.Unmarshal(s.Bytes(), &cmd) != nil {
				return
			}
			lines := answer(cmd.Execute, cmd.ID)
			if lines == nil {
				return
			}
			if _, err := c.Write([]byte(strings.Join(lines, "\r\n") + "\r\n")); err != nil {
				return
			}
		}
	}()
	return path
}

func ret(id json.RawMessage, v string) string { return fmt.Sprintf(`{"return": %s, "id": %s}`, v, id) }

func event(name string) string {
	return fmt.Sprintf(`{"timestamp": {"seconds": 1765150000, "microseconds": 1}, "event": %q, "data": {"n": %q}}`, name, strings.Repeat("x", 2000))
}

func dial(t *testing.T, path string) *Monitor {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := DialMonitor(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Disconnect() })
	return m
}

// TestMonitorReplyThenEvents: QEMU writes events right behind a reply
// (device_add, system_reset); each command still gets its reply whole
// (go-qemu's SocketMonitor handed out a buffer the events overwrote).
func TestMonitorReplyThenEvents(t *testing.T) {
	path := fakeQEMU(t, func(cmd string, id json.RawMessage) []string {
		switch cmd {
		case "qmp_capabilities":
			return []string{ret(id, "{}")}
		case "query-status":
			return []string{ret(id, `{"status": "running", "singlestep": false, "running": true}`), event("RESET"), event("ACPI_DEVICE_OST"), event("RESET")}
		}
		return []string{fmt.Sprintf(`{"error": {"class": "CommandNotFound", "desc": "The command %s has not been found\u001b[2J"}, "id": %s}`, cmd, id)}
	})
	m := dial(t, path)
	if m.Version.QEMU.Major != 7 || m.Version.QEMU.Minor != 2 {
		t.Errorf("version %s, want 7.2.0 from the greeting", m.Version)
	}
	evs, _ := m.Events(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; i < 200; i++ {
		out, err := m.RunContext(ctx, []byte(`{"execute":"query-status"}`))
		var st struct {
			Return struct{ Status string } `json:"return"`
		}
		if err != nil || json.Unmarshal(out, &st) != nil || st.Return.Status != "running" {
			t.Fatalf("run %d: %q %v", i, out, err)
		}
	}
	for i := 0; i < 3; i++ {
		e := <-evs
		if want := []string{"RESET", "ACPI_DEVICE_OST", "RESET"}[i]; e.Event != want {
			t.Errorf("event %d: %s, want %s", i, e.Event, want)
		}
	}
	// go-qemu's typed API runs over this monitor.
	st, err := raw.NewMonitor(m).QueryStatus()
	if err != nil || st.Status != raw.RunStateRunning {
		t.Errorf("raw QueryStatus: %+v %v", st, err)
	}
	// An error's text is cleaned: a terminal escape shows as U+FFFD.
	if _, err := m.RunContext(ctx, []byte(`{"execute":"frobnicate"}`)); err == nil || err.Error() != "QMP frobnicate: The command frobnicate has not been found\ufffd[2J" {
		t.Errorf("an error reply: %v", err)
	}
}

// TestMonitorEventBeforeCapabilities: an event QEMU sends before
// qmp_capabilities' reply is an event, not that reply, and later
// commands get their own replies (go-qemu PR #210).
func TestMonitorEventBeforeCapabilities(t *testing.T) {
	path := fakeQEMU(t, func(cmd string, id json.RawMessage) []string {
		switch cmd {
		case "qmp_capabilities":
			return []string{event("NIC_RX_FILTER_CHANGED"), ret(id, "{}")}
		case "query-name":
			return []string{ret(id, `{"name": "prove-1"}`)}
		}
		return nil
	})
	m := dial(t, path)
	out, err := m.Run([]byte(`{"execute":"query-name"}`))
	if err != nil || !strings.Contains(string(out), "prove-1") {
		t.Errorf("query-name: %s %v", out, err)
	}
}

// TestMonitorLateReply: a reply that comes after its caller gave up is
// dropped, not handed to the next command.
func TestMonitorLateReply(t *testing.T) {
	var slowID json.RawMessage
	path := fakeQEMU(t, func(cmd string, id json.RawMessage) []string {
		switch cmd {
		case "qmp_capabilities":
			return []string{ret(id, "{}")}
		case "slow":
			slowID = id
			return []string{}
		case "query-name":
			// The slow command's reply first, then this one's.
			return []string{ret(slowID, `{"name": "stale"}`), ret(id, `{"name": "fresh"}`)}
		}
		return nil
	})
	m := dial(t, path)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err := m.RunContext(ctx, []byte(`{"execute":"slow"}`))
	cancel()
	if err == nil || !strings.Contains(err.Error(), "QMP slow: no answer") {
		t.Errorf("slow: %v, want no answer", err)
	}
	out, err := m.Run([]byte(`{"execute":"query-name"}`))
	if err != nil || !strings.Contains(string(out), "fresh") {
		t.Errorf("query-name after a timed-out command: %s %v", out, err)
	}
}

// TestMonitorHostile: what a compromised QEMU might send ends the
// connection with a one-line reason, and nothing waits forever.
func TestMonitorHostile(t *testing.T) {
	for name, tc := range map[string]struct {
		lines []string
		want  string
	}{
		"garbage":       {[]string{"\x1b[2Jhello"}, "not QMP"},
		"huge":          {[]string{`{"return": "` + strings.Repeat("a", maxQMPLine) + `"}`}, "QEMU sent a QMP message over 1 MiB"},
		"hang up":       {nil, "QEMU closed its monitor"},
		"not an object": {[]string{`[1,2]`}, "not QMP"},
	} {
		t.Run(name, func(t *testing.T) {
			path := fakeQEMU(t, func(cmd string, id json.RawMessage) []string {
				if cmd == "qmp_capabilities" {
					return []string{ret(id, "{}")}
				}
				return tc.lines
			})
			m := dial(t, path)
			evs, _ := m.Events(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := m.RunContext(ctx, []byte(`{"execute":"query-status"}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line with %q", err, tc.want)
			}
			if _, ok := <-evs; ok {
				t.Error("the event channel stays open after the connection ended")
			}
			if _, err := m.RunContext(ctx, []byte(`{"execute":"query-status"}`)); err == nil {
				t.Error("a command after the end succeeded")
			}
		})
	}
	if _, err := (&Monitor{}).RunContext(context.Background(), []byte(`{"arguments":{}}`)); err == nil || !strings.Contains(err.Error(), "not a command") {
		t.Errorf("no execute: %v", err)
	}
}

// TestMonitorNoGreeting: a socket that never greets is given up at the
// deadline.
func TestMonitorNoGreeting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "qmp.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			time.Sleep(2 * time.Second)
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := DialMonitor(ctx, path); err == nil || !strings.Contains(err.Error(), "no greeting") {
		t.Errorf("%v, want no greeting", err)
	}
}

// TestMonitorRealQEMU: against Debian's QEMU, stop and cont (each
// reply followed at once by its STOP or RESUME event) 200 times: every
// reply whole, every event seen.
func TestMonitorRealQEMU(t *testing.T) {
	bin, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		if os.Geteuid() == 0 {
			t.Fatal("qemu-system-x86_64 is not installed (scripts/test-deps.sh installs it)")
		}
		t.Skip("no qemu-system-x86_64")
	}
	path := filepath.Join(t.TempDir(), "qmp.sock")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := exec.CommandContext(ctx, bin, "-machine", "none", "-nodefaults", "-display", "none", "-S",
		"-qmp", "unix:"+path+",server=on,wait=off")
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { q.Process.Kill(); q.Wait() }()
	m, err := WaitMonitor(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect()
	evs, _ := m.Events(ctx)
	counted := make(chan map[string]int)
	go func() {
		counts := map[string]int{}
		for counts["STOP"] < 200 || counts["RESUME"] < 200 {
			e, ok := <-evs
			if !ok {
				break
			}
			counts[e.Event]++
		}
		counted <- counts
	}()
	for i := 0; i < 200; i++ {
		for _, c := range []string{"cont", "stop"} {
			out, err := m.RunContext(ctx, []byte(`{"execute":"`+c+`"}`))
			if err != nil || !strings.HasPrefix(string(out), `{"return": {}`) {
				t.Fatalf("%s %d: %q %v", c, i, out, err)
			}
		}
	}
	if counts := <-counted; counts["STOP"] != 200 || counts["RESUME"] != 200 {
		t.Fatalf("events: %v, want 200 STOP and 200 RESUME", counts)
	}
	if _, err := m.RunContext(ctx, []byte(`{"execute":"quit"}`)); err != nil {
		t.Errorf("quit: %v", err)
	}
	var _ qmp.Monitor = m
}

// TestWaitMonitor: it waits for a socket that is not there yet, and
// gives up when QEMU is gone or the deadline passes, saying why.
func TestWaitMonitor(t *testing.T) {
	gone := make(chan struct{})
	close(gone)
	missing := filepath.Join(t.TempDir(), "qmp.sock")
	if _, err := WaitMonitor(context.Background(), missing, gone); err != errQEMUGone {
		t.Errorf("QEMU gone: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := WaitMonitor(ctx, missing, nil)
	if want := "QMP " + missing + ": connect: no such file or directory (context deadline exceeded)"; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
	path := fakeQEMU(t, func(cmd string, id json.RawMessage) []string { return []string{ret(id, "{}")} })
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	m, err := WaitMonitor(ctx2, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Disconnect()
}
