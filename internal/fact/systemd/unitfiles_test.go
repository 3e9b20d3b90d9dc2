package systemd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

func TestEnablement(t *testing.T) {
	dir := t.TempDir()
	link := func(target, name string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	link("/lib/systemd/system/ssh.service", "etc/systemd/system/multi-user.target.wants/ssh.service")
	link("/lib/systemd/system/ssh.service", "etc/systemd/system/sshd.service") // Debian's alias
	link("/dev/null", "etc/systemd/system/systemd-timesyncd.service")
	link("/lib/systemd/system/systemd-timesyncd.service", "etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service")
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		units       []string
		state, unit string
	}{
		{[]string{"ssh.service", "sshd.service"}, "enabled", "ssh.service"},
		{[]string{"systemd-timesyncd.service"}, "masked", "systemd-timesyncd.service"},
		{[]string{"chrony.service", "chronyd.service"}, "disabled", ""},
	} {
		if st, u := Enablement(r, tc.units...); st != tc.state || u != tc.unit {
			t.Errorf("Enablement(%v) = %s %s, want %s %s", tc.units, st, u, tc.state, tc.unit)
		}
	}
	empty, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if st, _ := Enablement(empty, "ssh.service"); st != "disabled" {
		t.Errorf("no /etc/systemd/system: %s", st)
	}
}
