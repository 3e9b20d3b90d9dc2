package ssh

import (
	"context"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// realSshd is what the tests against Debian's sshd share: root (why says
// what for), sshd itself, a temporary directory and an ed25519 host key in
// it, and sshd's privilege separation directory (testenv.SshdPrivsepDir,
// which removes it again when a test made it).
func realSshd(t *testing.T, why string) (sshd, dir, hostKey string) {
	t.Helper()
	testenv.RequireRoot(t, why)
	sshd = testenv.Tool(t, "sshd", "openssh-server")
	keygen := testenv.Tool(t, "ssh-keygen", "openssh-client")
	testenv.SshdPrivsepDir(t)
	dir = t.TempDir()
	hostKey = filepath.Join(dir, "hostkey")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	return sshd, dir, hostKey
}

// TestRealSshdListener starts Debian's sshd on 127.0.0.1 and checks that
// the socket read from /proc/net/tcp is attributed to that very process,
// and that the listening judgement follows the configuration.
func TestRealSshdListener(t *testing.T) {
	sshd, dir, hk := realSshd(t, "sshd needs root to start, and reading its /proc/PID/fd needs root")
	sd := testenv.StartSshd(t, sshd, dir, hk)
	t.Cleanup(func() {
		sd.Stop()
		if t.Failed() {
			t.Logf("sshd stderr:\n%s", sd.Stderr.String())
		}
	})
	addr, cmd := sd.Addr, sd.Cmd

	root, err := fs.Open("/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ls []Listener
	var known bool
	var found *Listener
	for found == nil && ctx.Err() == nil {
		ls, known, err = ReadListeners(ctx, nil, root, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ls {
			if ls[i].Addr == addr {
				found = &ls[i]
			}
		}
		if found == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if found == nil {
		t.Fatalf("no listener on %s among %d", addr, len(ls))
	}
	if !known {
		t.Error("as root every process's descriptors should be readable")
	}
	if found.PID != cmd.Process.Pid || found.Comm != "sshd" || filepath.Base(found.Exe) != "sshd" {
		t.Errorf("listener %s owned by %s (exe %s), want sshd[%d]", addr, found.Owner(), found.Exe, cmd.Process.Pid)
	}

	f := Facts{Listeners: ls, OwnersKnown: known, Config: cfgOf(t, "ListenAddress "+addr.String()+"\n")}
	want(t, JudgeListening(f), CodeListening, runner.Pass, addr.String()+" by sshd["+strconv.Itoa(cmd.Process.Pid)+"]")
	// The same socket does not satisfy a configuration for another port.
	other := netip.AddrPortFrom(addr.Addr(), addr.Port()+1)
	f.Config = cfgOf(t, "ListenAddress "+other.String()+"\n")
	want(t, JudgeListening(f), CodeNotListening, runner.Fail, other.String())
}
