package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/buildinfo"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/sealrecord"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestPartialSealRecord: `apply --ops -ssh-host-keys` leaves the keys and
// records their fingerprints with this build's version; verify with the
// same ops says sealed, and says not sealed once the record no longer
// matches the keys left in the image.
func TestPartialSealRecord(t *testing.T) {
	testenv.Tool(t, "ssh-keygen", "openssh-client")
	dir := scratch(t)
	makeTree(t, dir, 2, 2)
	key := filepath.Join(dir, "etc/ssh/ssh_host_ed25519_key")
	os.Remove(key)
	os.Remove(key + ".pub")
	os.Remove(filepath.Join(dir, "etc/ssh/ssh_host_rsa_key"))
	if b, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, b)
	}
	lf, err := exec.Command("ssh-keygen", "-lf", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	fp := strings.Fields(string(lf))[1]

	if code, out, errOut := runCmd(t, "", false, "apply", "--yes", "--root", dir, "--ops", "-ssh-host-keys"); code != 0 {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, sealrecord.Path))
	if err != nil {
		t.Fatal(err)
	}
	r, err := sealrecord.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.HostKeys) != 1 || r.HostKeys[0].Fingerprint != fp || r.HostKeysRemoved || !r.MachineIDCleared ||
		r.SealprepVersion != buildinfo.Version || r.MachineIDSHA256 != sealrecord.HashMachineID("4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b") {
		t.Fatalf("record %s", b)
	}
	if _, err := os.Stat(key); err != nil {
		t.Fatalf("the key was removed: %v", err)
	}
	if code, out, _ := runCmd(t, "", false, "verify", "--root", dir, "--ops", "-ssh-host-keys"); code != 0 {
		t.Fatalf("verify after a partial seal: %d\n%s", code, out)
	}
	forged := strings.Replace(string(b), fp, "SHA256:"+strings.Repeat("A", 43), 1)
	if err := os.WriteFile(filepath.Join(dir, sealrecord.Path), []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCmd(t, "", false, "verify", "--root", dir, "--ops", "-ssh-host-keys"); code != seal.ExitProblem || !strings.Contains(out, sealrecord.Path) {
		t.Fatalf("verify with a record that does not match the keys: %d\n%s", code, out)
	}
}
