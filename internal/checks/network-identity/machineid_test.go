package networkidentity

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

func writeHost(t *testing.T, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFirstbootMachineID: what systemd-firstboot --setup-machine-id writes
// into an image with no /etc/machine-id is, to guestcheck, a valid ID, and
// the image is then no longer judged by the missing-file rules. It leaves
// an existing file, empty or "uninitialized", as it is: systemd's own tools
// treat those as the sealed form too.
func TestFirstbootMachineID(t *testing.T) {
	tool := testenv.Tool(t, "systemd-firstboot", "systemd")
	for _, c := range []string{"missing", "", "uninitialized\n"} {
		root := t.TempDir()
		if c != "missing" {
			writeHost(t, root, MachineIDPath, c)
		} else if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(tool, "--root", root, "--setup-machine-id").CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", c, err, out)
		}
		ev := identity.ReadCloneEvidence(openRoot(t, root), false)
		got := codesOf(JudgeMachineID(ev, false))
		switch {
		case c == "missing" && (ev.MachineIDKind != identity.Valid || !ev.MachineIDFound):
			t.Errorf("firstboot wrote %q, guestcheck reads it as %s", ev.MachineIDRaw, ev.MachineIDKind)
		case c != "missing" && string(ev.MachineIDRaw) != c:
			t.Errorf("firstboot changed %q to %q", c, ev.MachineIDRaw)
		case !slices.Equal(got, []string{"pass identity-machine-id-ok"}):
			t.Errorf("%q: %v", c, got)
		}
	}
}
