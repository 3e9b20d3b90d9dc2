//go:build vmtest

package vm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/drill"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// freezeDrillUserData gives the guest qemu-ga with its fsfreeze hook on
// (Debian's qemu-ga runs none without fsfreeze-hook in qemu-ga.conf or -F)
// and one hook script whose behaviour /run/drill-mode picks between
// drills: nothing, fail (exit 3), or sleep (/run/drill-sleep seconds,
// after a console line naming /run/drill-token, so that the test knows
// the drill is inside guest-fsfreeze-freeze). /data is the data disk;
// /mnt/fuse a FUSE filesystem of one empty directory, served by a Python
// script from /dev/fuse and mount(2) alone (the image has fuse.ko but no
// libfuse, fuse3, sshfs or fuse2fs).
const freezeDrillUserData = baseUserData + `write_files:
  - path: /etc/qemu/qemu-ga.conf
    content: |
      [general]
      fsfreeze-hook=/etc/qemu/fsfreeze-hook
  - path: /etc/qemu/fsfreeze-hook.d/drill
    permissions: '0755'
    content: |
      #!/bin/sh
      [ "$1" = freeze ] || exit 0
      case "$(cat /run/drill-mode 2>/dev/null)" in
      fail) echo "cannot quiesce the database"; exit 3 ;;
      sleep) echo "drill-hook-$(cat /run/drill-token)" >/dev/ttyS0; sleep "$(cat /run/drill-sleep)" ;;
      esac
      exit 0
  - path: /usr/local/sbin/drillfuse
    permissions: '0755'
    content: |
      #!/usr/bin/python3
      # A FUSE filesystem of one empty directory, from /dev/fuse and mount(2)
      # alone (the image has no libfuse): the drill's FUSE mount.
      import ctypes, os, struct, sys
      mnt = sys.argv[1]
      fd = os.open("/dev/fuse", os.O_RDWR)
      libc = ctypes.CDLL(None, use_errno=True)
      opts = b"fd=%d,rootmode=40000,user_id=0,group_id=0" % fd
      if libc.mount(b"drillfuse", mnt.encode(), b"fuse.drillfuse", 0, opts) != 0:
          sys.exit("mount: " + os.strerror(ctypes.get_errno()))
      def reply(unique, err=0, body=b""):
          os.write(fd, struct.pack("<IiQ", 16 + len(body), err, unique) + body)
      attr = struct.pack("<QQQQQQIIIIIIIIII", 1, 0, 0, 0, 0, 0, 0, 0, 0, 0o40755, 2, 0, 0, 0, 4096, 0)
      while True:
          try:
              req = os.read(fd, 1 << 20)
          except OSError:
              break
          ln, op, unique, node = struct.unpack_from("<IIQQ", req)
          if op == 26:    # INIT
              major, minor = struct.unpack_from("<II", req, 40)
              reply(unique, body=struct.pack("<IIIIHHIIHHI28x", 7, min(minor, 31), 0, 0, 0, 0, 4096, 1, 0, 0, 0))
          elif op == 3:   # GETATTR
              reply(unique, body=struct.pack("<QII", 1, 0, 0) + attr)
          elif op == 17:  # STATFS
              reply(unique, body=struct.pack("<QQQQQIIII24x", 0, 0, 0, 0, 0, 4096, 255, 4096, 0))
          elif op == 27:  # OPENDIR
              reply(unique, body=struct.pack("<QII", 1, 0, 0))
          elif op in (28, 29, 34):  # READDIR (empty), RELEASEDIR, ACCESS
              reply(unique)
          elif op in (2, 36, 42):  # FORGET, INTERRUPT, BATCH_FORGET: no reply
              pass
          elif op == 38:  # DESTROY
              reply(unique)
              break
          elif op == 1:   # LOOKUP
              reply(unique, -2)
          else:
              reply(unique, -38)
runcmd:
  - [sh, -c, "mkdir -p /data && mount /dev/vdb /data"]
  - [sh, -c, "mkdir -p /mnt/fuse && systemd-run --unit=drillfuse /usr/local/sbin/drillfuse /mnt/fuse && for i in $(seq 60); do grep -q ' /mnt/fuse ' /proc/self/mountinfo && break; sleep 1; done"]
  - [systemctl, restart, qemu-guest-agent.service]
  - [sh, -c, "echo freezedrill-ready >/dev/ttyS0"]
`

// freezeDrillScenario is issue 41's drill against real qemu-ga, every
// case on one booted guest (a root and an ext4 data disk, Debian 12's
// qemu-ga 7.2 and fsfreeze-hook), reconfigured between drills through the
// agent: a healthy drill; a hook script that exits non-zero; one that
// sleeps past the deadline; the drill killed with SIGKILL inside the
// freeze (its guard thaws once the freeze lands); last, qemu-ga with
// guest-fsfreeze-freeze blocked. After each, the guest is thawed and a
// write to /data succeeds. The healthy drill runs with a FUSE mount: the
// guest's prediction and the drill agree on leaving it out.
func freezeDrillScenario(ctx context.Context, t *testing.T, e *env) {
	start := time.Now()
	gc := filepath.Join(t.TempDir(), "guestcheck")
	if _, err := run(ctx, "go", "build", "-o", gc, "github.com/guestcheck/guestcheck/cmd/guestcheck"); err != nil {
		t.Fatal(err)
	}
	v := startVM(ctx, t, spec{
		Name: "freezedrill", Base: e.img.Root, Image: e.img,
		InstanceID: "gc-freezedrill-1", Hostname: "gc-freezedrill",
		UserData: freezeDrillUserData, NICs: []nic{mgmtNIC}, DataDisk: true,
	})
	bctx, cancel := step(ctx, bootTimeout)
	defer cancel()
	if _, err := v.WaitConsole(bctx, regexp.MustCompile(`freezedrill-ready`)); err != nil {
		t.Fatal(err)
	}
	t.Logf("freezedrill: guest ready after %s", time.Since(start).Round(time.Second))
	sock := v.clone.QGA()
	// drillRun runs the host's guestcheck freeze-drill on the guest's
	// socket, which takes one client: the harness's connection goes
	// first.
	drillRun := func(t *testing.T, args ...string) (drill.VM, int, string) {
		t.Helper()
		if v.agent != nil {
			v.agent.Close()
			v.agent = nil
		}
		dctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		cmd := exec.CommandContext(dctx, gc, append([]string{"freeze-drill", "--agent-socket", "freezedrill=" + sock, "--format", "json"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		var r drill.Result
		if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil || len(r.VMs) != 1 {
			t.Fatalf("freeze-drill %v: %v %v\nstdout %s\nstderr %s", args, err, jerr, stdout.String(), stderr.String())
		}
		vm := r.VMs[0]
		t.Logf("%s: %s (freeze %dms, frozen %dms, thaw %dms; %d frozen; fsinfo %d/%d; hook %s %v; prediction %s %v)", vm.Status, vm.Reason,
			vm.FreezeMS, vm.FrozenMS, vm.ThawMS, vm.FrozenCount, len(vm.FSBefore), len(vm.FSAfter), vm.Hook.State, vm.Hook.Scripts, vm.Prediction.State, vm.Prediction.Predicted)
		return vm, code, stderr.String()
	}
	guestSh := func(t *testing.T, script string) {
		t.Helper()
		sctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		if r, err := v.Exec(sctx, "/bin/sh", "-c", script); err != nil || r.Exit != 0 {
			t.Fatalf("%s: %v %+v", script, err, r)
		}
	}
	// thawedAndWritable: the agent says thawed, and a write to /data and
	// to / returns (a frozen filesystem would block it until the step's
	// timeout).
	thawedAndWritable := func(t *testing.T, tag string) {
		t.Helper()
		a, err := v.Agent(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var st string
		if err := a.Exec(ctx, "guest-fsfreeze-status", nil, &st); err != nil || st != "thawed" {
			t.Fatalf("guest-fsfreeze-status after the drill: %q %v", st, err)
		}
		guestSh(t, "echo "+tag+" >/data/after-"+tag+" && echo "+tag+" >/var/tmp/after-"+tag+" && sync")
	}
	setMode := func(t *testing.T, mode, sleep, token string) {
		guestSh(t, fmt.Sprintf("echo %s >/run/drill-mode; echo %s >/run/drill-sleep; echo %s >/run/drill-token", mode, sleep, token))
	}

	t.Run("healthy", func(t *testing.T) {
		setMode(t, "none", "0", "none")
		vm, code, _ := drillRun(t, "--deadline", "30s")
		if code != 0 || vm.Status != drill.Pass || !vm.Froze || vm.ThawedBy != "drill" || vm.StatusFrozen != "frozen" {
			t.Fatalf("exit %d: %+v", code, vm)
		}
		if vm.FrozenCount < 2 || vm.FrozenCount != len(vm.FSBefore) || vm.ThawedCount != vm.FrozenCount || len(vm.FSAfter) != len(vm.FSBefore) {
			t.Errorf("froze %d, thawed %d; guest-get-fsinfo %d before, %d after", vm.FrozenCount, vm.ThawedCount, len(vm.FSBefore), len(vm.FSAfter))
		}
		data := false
		for _, f := range vm.FSBefore {
			data = data || f.Mountpoint == "/data"
		}
		if !data || vm.Prediction.State != drill.Agree || !strings.Contains(strings.Join(vm.Prediction.Predicted, ","), "/data") {
			t.Errorf("/data in fsinfo %v; prediction %+v", data, vm.Prediction)
		}
		if vm.Hook.State != drill.HookRan || !strings.Contains(vm.Reason, "/etc/qemu/fsfreeze-hook.d/drill (ok)") {
			t.Errorf("hook %+v; reason %q", vm.Hook, vm.Reason)
		}
		// The FUSE mount is there, and neither the agent nor the guest's
		// prediction counts it (qemu-ga freezes block devices only).
		sctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		mi, err := v.ReadFile(sctx, "/proc/self/mountinfo")
		if err != nil || !regexp.MustCompile(` /mnt/fuse \S+ .*- fuse\.drillfuse `).Match(mi) {
			t.Fatalf("no FUSE mount on /mnt/fuse in the guest: %v\n%s", err, mi)
		}
		for _, f := range vm.FSBefore {
			if f.Mountpoint == "/mnt/fuse" {
				t.Errorf("guest-get-fsinfo lists the FUSE mount: %+v", f)
			}
		}
		if strings.Contains(strings.Join(vm.Prediction.Predicted, ","), "/mnt/fuse") {
			t.Errorf("the prediction freezes the FUSE mount: %v", vm.Prediction.Predicted)
		}
		thawedAndWritable(t, "healthy")
	})
	t.Run("hook-fails", func(t *testing.T) {
		setMode(t, "fail", "0", "none")
		vm, code, _ := drillRun(t, "--deadline", "30s")
		// Debian 12's hook exits 0 whatever its scripts do: the freeze
		// succeeds, and the hook's log names the script that failed.
		if code != 1 || vm.Status != drill.Fail || vm.Hook.State != drill.HookFailed ||
			!strings.Contains(vm.Reason, "a hook script failed: /etc/qemu/fsfreeze-hook.d/drill freeze exit 3") || vm.Fix == "" {
			t.Fatalf("exit %d: %+v", code, vm)
		}
		thawedAndWritable(t, "hook-fails")
	})
	t.Run("hook-past-deadline", func(t *testing.T) {
		setMode(t, "sleep", "3", "late")
		vm, code, _ := drillRun(t, "--deadline", "1s")
		if code != 1 || vm.Status != drill.Fail || vm.FreezeMS < 3000 || vm.ThawedBy != "drill" ||
			!strings.Contains(vm.Reason, "past the 1s deadline; the fsfreeze hook ran /etc/qemu/fsfreeze-hook.d/drill (ok)") {
			t.Fatalf("exit %d: %+v", code, vm)
		}
		thawedAndWritable(t, "past-deadline")
	})
	t.Run("sigkill", func(t *testing.T) {
		// The drill is killed inside guest-fsfreeze-freeze, while the hook
		// sleeps: qemu-ga freezes after the drill is gone, and only the
		// guard, waiting on the agent's socket, can thaw.
		setMode(t, "sleep", "15", "kill")
		if v.agent != nil {
			v.agent.Close()
			v.agent = nil
		}
		dctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		cmd := exec.CommandContext(dctx, gc, "freeze-drill", "--agent-socket", "freezedrill="+sock, "--deadline", "1s")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := v.WaitConsole(dctx, regexp.MustCompile(`drill-hook-kill`)); err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		killed := time.Now()
		cmd.Process.Signal(syscall.SIGKILL)
		// Wait returns once the guard, which writes to the same stderr,
		// is done too.
		cmd.Wait()
		t.Logf("guard done %s after the SIGKILL: %s", time.Since(killed).Round(time.Second), strings.TrimSpace(stderr.String()))
		m := regexp.MustCompile(`the drill ended without thawing; its guard thawed freezedrill \((\d+) filesystem\(s\)\)`).FindStringSubmatch(stderr.String())
		if m == nil || m[1] == "0" {
			t.Fatalf("the guard's line (with the filesystems it thawed, so the guest was frozen) = %q", stderr.String())
		}
		thawedAndWritable(t, "sigkill")
	})
	t.Run("freeze-blocked", func(t *testing.T) {
		setMode(t, "none", "0", "none")
		// The restart runs from a timer outside qemu-ga's cgroup, after
		// this guest-exec has answered: restarting the agent under its
		// own guest-exec loses the exec's status.
		guestSh(t, `printf '[general]\nfsfreeze-hook=/etc/qemu/fsfreeze-hook\nblock-rpcs=guest-fsfreeze-freeze\n' >/etc/qemu/qemu-ga.conf && systemd-run --on-active=2 --unit=gc-qga-restart systemctl restart qemu-guest-agent.service`)
		// Wait for the restarted agent to report the freeze disabled.
		wctx, cancel := step(ctx, stepTimeout)
		defer cancel()
		for {
			time.Sleep(2 * time.Second)
			a, err := v.Agent(wctx)
			if err != nil {
				t.Fatal(err)
			}
			in, err := a.Info(wctx)
			if err == nil && slices.ContainsFunc(in.SupportedCommands, func(c qga.Command) bool { return c.Name == "guest-fsfreeze-freeze" && !c.Enabled }) {
				break
			}
		}
		vm, code, _ := drillRun(t)
		if code != 1 || vm.Status != drill.Unknown || vm.Froze ||
			!strings.Contains(vm.Reason, "the agent's RPC filter blocks guest-fsfreeze-freeze") || !strings.Contains(vm.Fix, "block-rpcs in /etc/qemu/qemu-ga.conf") {
			t.Fatalf("exit %d: %+v", code, vm)
		}
		thawedAndWritable(t, "blocked")
	})
	t.Logf("freezedrill: %s in all", time.Since(start).Round(time.Second))
}
