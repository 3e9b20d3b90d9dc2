// Package sealtest builds the guest trees that sealprep's tests seal, so
// that the seal package's tests of the sequence and cmd/sealprep's tests
// of the binary start from the same root.
package sealtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// MachineID is the machine-id MakeTree writes.
const MachineID = "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b"

// MakeTree writes a Debian-like root in dir with the usual identity files,
// nLogs log files spread over /var/log subdirectories (a quarter of them
// rotated) and nTmp files in /tmp.
func MakeTree(tb testing.TB, dir string, nLogs, nTmp int) {
	tb.Helper()
	files := map[string]string{
		"usr/lib/os-release":                     "ID=debian\nVERSION_ID=12\n",
		"etc/passwd":                             "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n",
		"etc/machine-id":                         MachineID + "\n",
		"var/lib/dbus/machine-id":                MachineID + "\n",
		"etc/hostname":                           "template-01\n",
		"usr/lib/systemd/systemd":                "ELF",
		"usr/sbin/sshd":                          "ELF",
		"usr/bin/ssh-keygen":                     "ELF",
		"usr/bin/cloud-init":                     "#!/usr/bin/python3\n",
		"etc/cloud/cloud.cfg":                    "cloud_init_modules:\n - ssh\n",
		"etc/ssh/ssh_host_ed25519_key":           "K",
		"etc/ssh/ssh_host_ed25519_key.pub":       "K",
		"etc/ssh/ssh_host_rsa_key":               "K",
		"var/lib/cloud/data/instance-id":         "iid\n",
		"var/lib/cloud/instances/iid/user-data":  "#cloud-config\n",
		"var/lib/systemd/random-seed":            "SEED",
		"var/lib/dhcp/dhclient.eth0.leases":      "lease {}\n",
		"var/log/journal/4f6b/system.journal":    "LPKSHHRH",
		"var/log/wtmp":                           "wtmp",
		"root/.bash_history":                     "ls\n",
		"home/alice/.bash_history":               "ls\n",
		"var/cache/apt/archives/x_1.0_amd64.deb": "DEB",
		"etc/passwd-":                            "old\n",
	}
	for i := 0; i < nLogs; i++ {
		name := fmt.Sprintf("var/log/app%02d/service%05d.log", i%50, i)
		if i%4 == 3 {
			name += ".1.gz"
		}
		files[name] = "template-01 something happened\n"
	}
	for i := 0; i < nTmp; i++ {
		files[fmt.Sprintf("tmp/build-%03d/f%05d", i%20, i)] = "x"
	}
	made := map[string]bool{}
	for p, c := range files {
		hp := filepath.Join(dir, p)
		if d := filepath.Dir(hp); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				tb.Fatal(err)
			}
			made[d] = true
		}
		if err := os.WriteFile(hp, []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Symlink("../usr/lib/os-release", filepath.Join(dir, "etc/os-release")); err != nil {
		tb.Fatal(err)
	}
	for _, d := range []string{"etc/systemd/system", "var/tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
}
