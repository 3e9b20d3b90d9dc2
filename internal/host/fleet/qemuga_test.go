package fleet

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// startQemuGA runs a real qemu-ga on a unix socket in dir (its
// unix-listen method: the protocol of a guest's virtio port, without a
// guest), with extra options, until the test ends.
func startQemuGA(t *testing.T, dir, name string, extra ...string) string {
	t.Helper()
	ga := testenv.Tool(t, "qemu-ga", "qemu-guest-agent")
	sock := filepath.Join(dir, name+".qga")
	state := filepath.Join(dir, name+".state")
	os.Mkdir(state, 0o700)
	args := append([]string{"-m", "unix-listen", "-p", sock, "-f", filepath.Join(dir, name+".pid"), "-t", state}, extra...)
	cmd := exec.Command(ga, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			return sock
		}
		if time.Now().After(deadline) {
			t.Fatalf("qemu-ga made no socket %s in 10 s", sock)
		}
	}
}

// script writes an executable file of mode into dir.
func script(t *testing.T, dir, name, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRealQemuGA surveys through Debian's qemu-ga itself, listening on a
// unix socket: its guest-info, its guest-exec and guest-exec-status, its
// error replies for a blocked RPC, a missing program and one that may not
// be executed. The "guestcheck" it runs is a script that prints a canned
// report, so nothing reads this machine.
func TestRealQemuGA(t *testing.T) {
	dir, err := os.MkdirTemp("", "qga")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	id := func(n string) *guestid.Identity {
		return &guestid.Identity{MachineIDHash: "4f1d2c3b4a5968778695a4b3c2d1e0f9", InstanceID: "i-" + n}
	}
	for _, n := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(dir, n+".json"), guestReport(t, runner.Warn, id(n)), 0o644)
		script(t, dir, "guestcheck-"+n, "#!/bin/sh\nexec cat "+filepath.Join(dir, n+".json")+"\n", 0o755)
	}
	script(t, dir, "not-executable", "#!/bin/sh\n", 0o644)
	script(t, dir, "garbage", "#!/bin/sh\necho \"$@\"\n", 0o755)
	open := startQemuGA(t, dir, "open")
	blocked := startQemuGA(t, dir, "blocked", "-b", "guest-exec")
	type tc struct {
		name, sock, path, want string
		st                     Status
	}
	cases := []tc{
		{"clone-a", open, "guestcheck-a", "shares machine-id with clone-b", Fail},
		{"clone-b", open, "guestcheck-b", "shares machine-id with clone-a", Fail},
		{"blocked", blocked, "guestcheck-a", "guest-exec is disabled in the guest agent", Unknown},
		{"not-installed", open, "absent", "guestcheck is not installed in the guest", Unknown},
		{"denied", open, "not-executable", "permission denied running", Unknown},
		{"garbage", open, "garbage", "guestcheck's output: not a JSON report", Unknown},
	}
	// One target per case: each its own --guestcheck-path, so each its
	// own survey, compared together afterwards.
	var vms []VM
	for _, c := range cases {
		ts := SocketSource{{Name: c.name, Path: c.sock}}.targets()
		r := Survey(context.Background(), ts, nil, Options{VMTimeout: 20 * time.Second, GuestcheckPath: filepath.Join(dir, c.path)})
		if len(r.VMs) != 1 {
			t.Fatalf("%s: %+v", c.name, r.VMs)
		}
		if !strings.HasPrefix(r.VMs[0].AgentVersion, "7.") && !strings.HasPrefix(r.VMs[0].AgentVersion, "8.") && !strings.HasPrefix(r.VMs[0].AgentVersion, "9.") {
			t.Errorf("%s: agent version %q", c.name, r.VMs[0].AgentVersion)
		}
		vms = append(vms, r.VMs[0])
	}
	for _, vm := range vms {
		t.Logf("%s: %s %s", vm.Name, vm.Status, vm.Reason)
	}
	all := Result{VMs: vms}
	all.finish()
	for _, c := range cases {
		for _, vm := range all.VMs {
			if vm.Name == c.name && (vm.Status != c.st || !strings.Contains(vm.Reason, c.want)) {
				t.Errorf("%s: %s %q, want %s with %q", c.name, vm.Status, vm.Reason, c.st, c.want)
			}
		}
	}
}
