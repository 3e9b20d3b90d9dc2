package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal"
)

// TestVerifyMachineIDSemantics: `sealprep verify` judges /etc/machine-id
// by machine-id(5). An empty or "uninitialized" file is sealed whatever
// its mode (another mode is a warning), under either --machine-id-mode; a
// missing one is sealed only on a root that is writable at boot.
func TestVerifyMachineIDSemantics(t *testing.T) {
	for _, tc := range []struct {
		name, content string // content "-": missing
		perm          os.FileMode
		cmdline       string // /etc/kernel/cmdline; "" for none
		mode          string
		code          int
		out           string
	}{
		{"empty 0644", "", 0o644, "", "empty", seal.ExitOK, "warn: truncate /etc/machine-id (mode 0444)"},
		{"uninitialized, default mode", "uninitialized\n", 0o444, "", "empty", seal.ExitOK, "SEALED: 0 identity items left"},
		{"uninitialized 0644", "uninitialized\n", 0o644, "", "empty", seal.ExitOK, ", 1 warning"},
		{"empty, mode uninitialized", "", 0o444, "", "uninitialized", seal.ExitOK, "already empty: systemd generates a new ID at boot"},
		{"missing, rw at boot", "-", 0, "root=/dev/vda1 rw\n", "empty", seal.ExitOK, "systemd creates a new ID at boot"},
		{"missing, ro at boot", "-", 0, "root=/dev/vda1 ro\n", "empty", seal.ExitProblem, "systemd cannot create the file and refuses to boot"},
		{"missing, no command line", "-", 0, "", "empty", seal.ExitProblem, "no kernel command line in the image"},
		{"valid ID 0644", "4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b\n", 0o644, "", "empty", seal.ExitProblem, "NOT-SEALED: 1 identity items left"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := scratch(t)
			makeTree(t, dir, 0, 0)
			mid := filepath.Join(dir, "etc/machine-id")
			if err := os.Remove(filepath.Join(dir, "var/lib/dbus/machine-id")); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(mid); err != nil {
				t.Fatal(err)
			}
			if tc.content != "-" {
				if err := os.WriteFile(mid, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(mid, tc.perm); err != nil {
					t.Fatal(err)
				}
			}
			if tc.cmdline != "" {
				if err := os.MkdirAll(filepath.Join(dir, "etc/kernel"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "etc/kernel/cmdline"), []byte(tc.cmdline), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, _ := runCmd(t, "", false, "verify", "--root", dir, "--ops", "machine-id", "--machine-id-mode", tc.mode)
			if code != tc.code || !strings.Contains(strings.Join(strings.Fields(out), " "), tc.out) {
				t.Errorf("verify: exit %d (want %d), want %q in:\n%s", code, tc.code, tc.out, out)
			}
		})
	}
}
