package ssh

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestKeyModesAgainstSshd sets a root-owned host key to each mode and
// compares privateModeOK (for this Debian sshd, without Red Hat's ssh_keys
// patch) with whether `sshd -t` loads the key.
func TestKeyModesAgainstSshd(t *testing.T) {
	sshd, dir, hk := realSshd(t, "sshd checks a host key's mode only when it owns the key, so the key must be root's")
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
