package seal

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
)

// TestDHCPLeasesDhcpcd plans dhcp-leases on dhcpcd's state of every
// version (dhcpcd(8) FILES): dhcpcd 6's DUID and secret in /etc and its
// leases in /var/db, dhcpcd 7's DBDIR as distributions build it and by
// default. Everything identity.ReadDHCPState reports goes, and nothing
// else of /var/db or /etc.
func TestDHCPLeasesDhcpcd(t *testing.T) {
	dir, root := newRoot(t, append(base("debian"),
		f("/etc/dhcpcd.duid", "00:01:00:01:2c:3d:4e:5f:52:54:00:12:34:56\n"),
		fm("/etc/dhcpcd.secret", "SECRET", 0o600),
		f("/etc/dhcpcd.conf", "slaac private\n"),
		f("/var/lib/dhcpcd/duid", "00:04:11:22:33:44:55:66:77:88\n"),
		fm("/var/lib/dhcpcd/secret", "SECRET", 0o600),
		f("/var/lib/dhcpcd/eth0.lease", "LEASE"),
		f("/var/lib/dhcpcd/eth0.lease6", "LEASE6"),
		f("/var/db/dhcpcd/duid", "00:04:11:22:33:44:55:66:77:88\n"),
		f("/var/db/dhcpcd/wlan0-home.lease", "LEASE"),
		f("/var/db/dhcpcd-eth0.lease", "LEASE"),
		f("/var/db/dhcpcd-eth0.lease6", "LEASE6"),
		f("/var/db/other.db", "keep"),
	))
	if left := identity.ReadDHCPState(root); len(left) != 10 {
		t.Fatalf("ReadDHCPState before = %d entries, want 10:\n%v", len(left), left)
	}
	ops, _ := Select(All, "dhcp-leases")
	plan, res := applyAll(t, root, ops, Options{})
	var paths []string
	for _, a := range plan.Actions {
		paths = append(paths, a.Path)
	}
	for _, p := range []string{"/etc/dhcpcd.duid", "/etc/dhcpcd.secret", "/var/lib/dhcpcd/secret", "/var/db/dhcpcd/duid", "/var/db/dhcpcd-eth0.lease6"} {
		if !slices.Contains(paths, p) {
			t.Errorf("no action for %s; plan %v", p, paths)
		}
	}
	for _, r := range res {
		if r.Status != Done {
			t.Errorf("%s %s: %s %s", r.Kind, r.Path, r.Status, r.Error)
		}
	}
	if left := identity.ReadDHCPState(root); len(left) != 0 {
		t.Errorf("ReadDHCPState after apply = %v", left)
	}
	for _, keep := range []string{"etc/dhcpcd.conf", "var/db/other.db", "var/lib/dhcpcd", "var/db/dhcpcd"} {
		if _, err := os.Lstat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
	if again := MakePlan(context.Background(), root, ops, Options{}); len(again.Actions) != 0 {
		t.Errorf("verify after apply: %+v", again.Actions)
	}
}

// TestDHCPLeasesDhcpcdHardLinkAndSymlink: dhcpcd's /etc files are
// removed by name, a link as a link (never followed out of the root), and
// a hard-linked DUID's other name keeps the inode.
func TestDHCPLeasesDhcpcdHardLinkAndSymlink(t *testing.T) {
	outside := t.TempDir()
	target := filepath.Join(outside, "duid")
	if err := os.WriteFile(target, []byte("00:01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, root := newRoot(t, append(base("debian"), l("/etc/dhcpcd.secret", filepath.Join(outside, "secret"))))
	if err := os.Link(target, filepath.Join(dir, "etc/dhcpcd.duid")); err != nil {
		t.Skipf("hard link across directories: %v", err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("S"), 0o600); err != nil {
		t.Fatal(err)
	}
	ops, _ := Select(All, "dhcp-leases")
	_, res := applyAll(t, root, ops, Options{})
	for _, r := range res {
		if r.Status != Done {
			t.Errorf("%s %s: %s %s", r.Kind, r.Path, r.Status, r.Error)
		}
	}
	for _, p := range []string{"etc/dhcpcd.duid", "etc/dhcpcd.secret"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	for _, p := range []string{target, filepath.Join(outside, "secret")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("outside the root: %s: %v", p, err)
		}
	}
}
