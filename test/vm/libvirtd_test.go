//go:build vmtest

package vm

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/digitalocean/go-libvirt"
)

// libvirtd is a private libvirtd for one test, started by the test itself:
// CI has no systemd as PID 1 to start the packaged one, and a host that
// runs its own libvirtd must not see (or lock) the test's domains. It runs
// in a mount namespace of its own (unshare -m) in which a directory of
// the test is bind-mounted over /etc/libvirt, /var/lib/libvirt,
// /run/libvirt, /var/log/libvirt and /var/cache/libvirt; so inside the
// namespace it is qemu:///system at the usual paths, and outside its
// socket and the agent channels are under Dir. A host libvirtd keeps its
// own state and socket.
type libvirtd struct {
	Dir  string // lib/, run/, etc/, log/, cache/ of the namespace
	cmd  *exec.Cmd
	done chan struct{}
}

// libvirtdConf keeps libvirtd to what the test needs: no polkit (root's
// connection is trusted), errors and warnings to its log.
const libvirtdConf = `unix_sock_rw_perms = "0700"
unix_sock_ro_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:/var/log/libvirt/libvirtd.log"
`

// qemuConf runs QEMU as root without the host integration a container
// lacks: no security driver or relabelling, no cgroups (libvirt finds no
// controller it can use), no per-domain /dev namespace, and QEMU's
// output to a file rather than through virtlogd.
const qemuConf = `user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
`

// startLibvirtd starts the private libvirtd and waits for its socket. It
// is stopped at the test's end (stop), and the domains' QEMU processes
// are killed then too.
func startLibvirtd(ctx context.Context, t *testing.T) *libvirtd {
	t.Helper()
	for _, tool := range []string{"libvirtd", "unshare", "nsenter", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("missing %s: apt-get install libvirt-daemon-system util-linux", tool)
		}
	}
	dir, err := os.MkdirTemp("", "gcvm-libvirtd-")
	if err != nil {
		t.Fatal(err)
	}
	d := &libvirtd{Dir: dir, done: make(chan struct{})}
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, m := range [][2]string{{"etc", "/etc/libvirt"}, {"lib", "/var/lib/libvirt"}, {"run", "/run/libvirt"},
		{"log", "/var/log/libvirt"}, {"cache", "/var/cache/libvirt"}} {
		if err := os.MkdirAll(filepath.Join(dir, m[0]), 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&script, "mkdir -p %s\nmount --bind %s %s\n", m[1], filepath.Join(dir, m[0]), m[1])
	}
	script.WriteString("exec libvirtd --config /etc/libvirt/libvirtd.conf\n")
	for name, body := range map[string]string{"etc/libvirtd.conf": libvirtdConf, "etc/qemu.conf": qemuConf, "start.sh": script.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// --propagation private: the bind mounts stay inside the namespace.
	d.cmd = exec.Command("unshare", "--mount", "--propagation", "private", "sh", filepath.Join(dir, "start.sh"))
	out, err := os.Create(filepath.Join(dir, "libvirtd.out"))
	if err != nil {
		t.Fatal(err)
	}
	d.cmd.Stdout, d.cmd.Stderr = out, out
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start libvirtd: %v", err)
	}
	out.Close()
	go func() { d.cmd.Wait(); close(d.done) }()
	t.Cleanup(func() { d.cleanup(t) })
	deadline := time.Now().Add(60 * time.Second)
	for {
		if c, err := net.DialTimeout("unix", d.Socket(), time.Second); err == nil {
			c.Close()
			break
		}
		select {
		case <-d.done:
			t.Fatalf("libvirtd exited at start:\n%s", d.Log())
		case <-ctx.Done():
			t.Fatalf("libvirtd: no socket: %v", ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("libvirtd: no socket %s after 60 s:\n%s", d.Socket(), d.Log())
		}
	}
	t.Logf("libvirtd %d running in its own mount namespace, state under %s", d.cmd.Process.Pid, dir)
	return d
}

// Socket is qemu:///system's socket, as seen from outside the namespace.
func (d *libvirtd) Socket() string { return filepath.Join(d.Dir, "run", "libvirt-sock") }

// Outside maps a path inside the namespace to the same file outside it.
func (d *libvirtd) Outside(p string) string {
	for _, m := range [][2]string{{"/var/lib/libvirt/", "lib"}, {"/run/libvirt/", "run"}, {"/var/run/libvirt/", "run"}} {
		if rest, ok := strings.CutPrefix(p, m[0]); ok {
			return filepath.Join(d.Dir, m[1], rest)
		}
	}
	return p
}

// Log is libvirtd's log and output, for failure messages.
func (d *libvirtd) Log() string {
	a, _ := os.ReadFile(filepath.Join(d.Dir, "libvirtd.out"))
	b, _ := os.ReadFile(filepath.Join(d.Dir, "log", "libvirtd.log"))
	return tail(string(a)+string(b), 30)
}

// Command runs name inside libvirtd's mount namespace, where
// qemu:///system is this libvirtd.
func (d *libvirtd) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	a := append([]string{"--mount", "--target", strconv.Itoa(d.cmd.Process.Pid), "--", name}, args...)
	return exec.CommandContext(ctx, "nsenter", a...)
}

// Connect opens a go-libvirt connection for the test's own calls
// (creating domains, reading their XML).
func (d *libvirtd) Connect(t *testing.T) *libvirt.Libvirt {
	t.Helper()
	u, _ := url.Parse("qemu+unix:///system?socket=" + d.Socket())
	l, err := libvirt.ConnectToURI(u)
	if err != nil {
		t.Fatalf("connect to the test's libvirtd: %v", err)
	}
	t.Cleanup(func() { l.Disconnect() })
	return l
}

// Stop ends libvirtd (SIGTERM) and waits for it. The domains' QEMU
// processes keep running: libvirt daemonises them, and a restarted
// libvirtd would reconnect to them. Their agent sockets are then free for
// another client.
func (d *libvirtd) Stop(t *testing.T) {
	t.Helper()
	select {
	case <-d.done:
		return
	default:
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
		t.Errorf("libvirtd did not stop on SIGTERM within 30 s")
	}
}

// cleanup stops libvirtd, kills the QEMU processes it started (by the
// PIDs libvirt recorded) and removes its directory, unless the test
// failed.
func (d *libvirtd) cleanup(t *testing.T) {
	d.Stop(t)
	pids, _ := filepath.Glob(filepath.Join(d.Dir, "run", "qemu", "*.pid"))
	for _, p := range pids {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		// Only a QEMU process: the PID may be stale.
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) != "qemu-system-x86" {
			continue
		}
		syscall.Kill(pid, syscall.SIGKILL)
		for i := 0; i < 50; i++ {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if t.Failed() {
		t.Logf("libvirtd: log tail:\n%s\nfiles kept in %s", d.Log(), d.Dir)
		return
	}
	os.RemoveAll(d.Dir)
}

// QEMUCPU is the CPU time (user and system) the domain's QEMU has used,
// by the PID libvirt recorded: under TCG what a guest costs a shared
// host, which wall time on a loaded machine does not tell.
func (d *libvirtd) QEMUCPU(name string) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join(d.Dir, "run", "qemu", name+".pid"))
	if err != nil {
		return 0, err
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%s/stat", strings.TrimSpace(string(b))))
	if err != nil {
		return 0, err
	}
	// Fields after the command's closing parenthesis: state is the
	// first, utime and stime the 12th and 13th (proc(5)'s 14 and 15).
	i := strings.LastIndexByte(string(st), ')')
	f := strings.Fields(string(st)[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("%s: /proc stat has no CPU times", name)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	// USER_HZ is 100 on every Linux x86 build.
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
