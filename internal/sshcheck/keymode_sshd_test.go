package sshcheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestKeyModesAgainstSshd sets a root-owned host key to each mode and
// compares privateModeOK (for this Debian sshd, without Red Hat's ssh_keys
// patch) with whether `sshd -t` loads the key.
func TestKeyModesAgainstSshd(t *testing.T) {
	testenv.RequireRoot(t, "sshd checks a host key's mode only when it owns the key, so the key must be root's")
	sshd := testenv.Tool(t, "sshd", "openssh-server")
	keygen := testenv.Tool(t, "ssh-keygen", "openssh-client")
	// See TestRealSshdListener: left in place for parallel packages.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hk := filepath.Join(dir, "hostkey")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", hk).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	cfg := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(cfg, []byte("HostKey "+hk+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range []os.FileMode{0o600, 0o400, 0o700, 0o640, 0o604, 0o644, 0o660, 0o610, 0o601, 0o000} {
		if err := os.Chmod(hk, m); err != nil {
			t.Fatal(err)
		}
		loaded := exec.Command(sshd, "-t", "-f", cfg).Run() == nil
		ours := privateModeOK(HostKey{Mode: m, Group: "root"}, false)
		if ours != loaded {
			t.Errorf("mode %s: privateModeOK = %v, sshd -t loads it: %v", fmt.Sprintf("%04o", m), ours, loaded)
		}
	}
}
