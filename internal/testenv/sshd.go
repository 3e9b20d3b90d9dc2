package testenv

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// SshdPrivsepDir provides /run/sshd, the privilege separation directory
// sshd refuses to run without, which openssh-server's tmpfiles.d makes at
// boot (a build container may have none). A directory the tests made is
// removed after the last test that needs it, so no test leaves it on the
// host; one that was there before is never touched. Call it as root.
func SshdPrivsepDir(t testing.TB) {
	t.Helper()
	privsepDir(t, "/run", "/run/sshd")
}

// privsepDir provides dir for the test; lockDir holds it. Tests of
// several packages run in parallel processes, so they coordinate through
// flock(2) on lockDir: each holds a shared lock while it needs dir, and at
// its end the one that can take the lock exclusively (no other holder
// left) removes a dir that a test made, as a marker file inside it says.
func privsepDir(t testing.TB, lockDir, dir string) {
	t.Helper()
	lock, err := os.Open(lockDir)
	if err != nil {
		t.Fatal(err)
	}
	fd := int(lock.Fd())
	if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
		lock.Close()
		t.Fatalf("flock %s: %v", lockDir, err)
	}
	marker := filepath.Join(dir, ".made-by-guestcheck-tests")
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		if err := os.WriteFile(marker, nil, 0o600); err != nil {
			os.Remove(dir)
			lock.Close()
			t.Fatal(err)
		}
	case !errors.Is(err, iofs.ErrExist):
		lock.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer lock.Close()
		// Converting to an exclusive lock fails while another test holds
		// its shared one: that test, ending later, removes dir instead.
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
			return
		}
		if os.Remove(marker) == nil {
			if err := os.Remove(dir); err != nil {
				t.Errorf("remove %s: %v", dir, err)
			}
		}
	})
}

// Sshd is an sshd that StartSshd started in the foreground.
type Sshd struct {
	// Addr is the loopback address it was told to listen on.
	Addr netip.AddrPort
	// Cmd is the running process.
	Cmd *exec.Cmd
	// Stderr collects its log (-e); read it once Exited is closed.
	Stderr *bytes.Buffer
	// Exited is closed when the process has exited and been waited for.
	Exited <-chan struct{}
}

// StartSshd starts sshd (a path from Tool) with one host key, listening on
// a free port of 127.0.0.1, without a pid file, its config written in dir.
// The caller stops it with Stop: tests that start one per case must not
// keep them all until the test ends. Call SshdPrivsepDir first.
func StartSshd(t testing.TB, sshd, dir, hostKey string) *Sshd {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.MustParseAddrPort(l.Addr().String())
	l.Close()
	cfg := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfg, []byte("ListenAddress "+addr.String()+"\nHostKey "+hostKey+"\nPidFile none\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Sshd{Addr: addr, Cmd: exec.Command(sshd, "-D", "-e", "-f", cfg), Stderr: new(bytes.Buffer)}
	s.Cmd.Stderr = s.Stderr
	if err := s.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(exited) }()
	s.Exited = exited
	return s
}

// Stop kills the sshd and waits for it.
func (s *Sshd) Stop() {
	_ = s.Cmd.Process.Kill()
	<-s.Exited
}
