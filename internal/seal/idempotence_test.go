package seal

import (
	"context"
	"fmt"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"os"
	"path/filepath"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"

	"golang.org/x/sys/unix"
)

// TestApplyIdempotent seals every fixture with every operation, then
// checks that a re-plan is empty, and that a second apply plans nothing
// and changes nothing at all (same names, contents, modes, mtimes, inodes).
func TestApplyIdempotent(t *testing.T) {
	for _, spec := range []string{"defaults", "all"} {
		for _, fx := range fixtures {
			t.Run(spec+"/"+fx.name, func(t *testing.T) { testIdempotent(t, spec, fx.name, fx.nodes()) })
		}
	}
}

func testIdempotent(t *testing.T, spec, name string, nodes []node) {
	ops, err := Select(All, spec)
	if err != nil {
		t.Fatal(err)
	}
	dir, root := newRoot(t, nodes)
	o := Options{Force: true}
	plan, res := applyAll(t, root, ops, o)
	if len(plan.Actions) == 0 {
		t.Fatal("first plan is empty: the fixture exercises nothing")
	}
	for _, r := range res {
		if r.Status != Done {
			t.Errorf("first apply: %s %s: %s %s", r.Kind, r.Path, r.Status, r.Error)
		}
	}
	after := MakePlan(context.Background(), root, ops, o)
	if len(after.Actions) != 0 || len(after.Errors) != 0 {
		t.Fatalf("plan after apply: %d actions %v, errors %v", len(after.Actions), after.Actions, after.Errors)
	}
	h1 := hashTree(t, dir, true)
	plan2, res2 := applyAll(t, root, ops, o)
	if len(plan2.Actions) != 0 || len(res2) != 0 {
		t.Fatalf("second apply planned %d actions", len(plan2.Actions))
	}
	if h2 := hashTree(t, dir, true); h1 != h2 {
		t.Fatal("second apply changed the tree")
	}
	checkSealed(t, dir, name, spec == "all")
}

// checkSealed asserts the postconditions that matter most for a clone.
func checkSealed(t *testing.T, dir, name string, optIn bool) {
	t.Helper()
	st, err := os.Stat(filepath.Join(dir, "etc/machine-id"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 0 || st.Mode().Perm() != 0o444 {
		t.Errorf("/etc/machine-id: size %d mode %v, want empty 0444", st.Size(), st.Mode().Perm())
	}
	if tgt, err := os.Readlink(filepath.Join(dir, "var/lib/dbus/machine-id")); err == nil && tgt != "/etc/machine-id" {
		t.Errorf("/var/lib/dbus/machine-id -> %q", tgt)
	} else if err != nil && !os.IsNotExist(err) {
		t.Errorf("/var/lib/dbus/machine-id is not a symlink: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "etc/ssh/ssh_host_*")); len(m) > 0 {
		t.Errorf("host keys left: %v", m)
	}
	for _, keep := range []string{"var/log/journal", "tmp", "var/tmp", "etc/passwd", "etc/shadow", "etc/os-release", "etc/ssh/sshd_config"} {
		if _, err := os.Lstat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s should stay: %v", keep, err)
		}
	}
	if name == "debian" && optIn {
		if _, err := os.Stat(filepath.Join(dir, "var/lib/cloud/seed/nocloud/meta-data")); err == nil {
			t.Errorf("cloud-init-seed ran but seed is still there")
		}
		// The admin's history link to /dev/null is a setting, not history.
		if tgt, _ := os.Readlink(filepath.Join(dir, "home/alice/.zsh_history")); tgt != "/dev/null" {
			t.Errorf(".zsh_history link changed: %q", tgt)
		}
	}
	if name == "debian-nocloud" {
		b, err := os.ReadFile(filepath.Join(dir, identity.KeygenUnitPath))
		if err != nil || string(b) != identity.KeygenUnit {
			t.Errorf("keygen unit not installed: %v", err)
		}
		if tgt, _ := os.Readlink(filepath.Join(dir, identity.KeygenWantsDir, identity.KeygenUnitName)); tgt != identity.KeygenUnitPath {
			t.Errorf("keygen unit not enabled: %q", tgt)
		}
	}
	if name == "rhel" {
		b, _ := os.ReadFile(filepath.Join(dir, "etc/sysconfig/network-scripts/ifcfg-eth0"))
		if want := "DEVICE=eth0\nBOOTPROTO=dhcp\nONBOOT=yes\n"; string(b) != want {
			t.Errorf("ifcfg-eth0 = %q, want %q", b, want)
		}
		st, err := os.Stat(filepath.Join(dir, "etc/NetworkManager/system-connections/eth0.nmconnection"))
		if optIn != os.IsNotExist(err) || (!optIn && st.Mode().Perm() != 0o600) {
			t.Errorf("keyfile: opt-in %v, stat %v %v", optIn, st, err)
		}
	}
}

// TestTruncateKeepsInodeAndXattrs: truncation happens in place, so the
// inode, owner, mode and extended attributes (the SELinux label on a real
// system) stay; a rewrite carries them to the new inode.
func TestTruncateKeepsInodeAndXattrs(t *testing.T) {
	dir, root := newRoot(t, rhelNodes())
	log := filepath.Join(dir, "var/log/messages")
	ifcfg := filepath.Join(dir, "etc/sysconfig/network-scripts/ifcfg-eth0")
	for _, p := range []string{log, ifcfg} {
		if err := unix.Setxattr(p, "user.label", []byte("system_u:object_r:var_log_t:s0"), 0); err != nil {
			testenv.Missing(t, "xattrs", fmt.Sprintf("user xattrs unsupported on the test directory's filesystem: %v", err))
		}
	}
	var before unix.Stat_t
	if err := unix.Stat(log, &before); err != nil {
		t.Fatal(err)
	}
	applyAll(t, root, allOps(t), Options{Force: true})
	var after unix.Stat_t
	if err := unix.Stat(log, &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != before.Ino || after.Size != 0 || after.Mode != before.Mode || after.Uid != before.Uid {
		t.Errorf("truncate: inode %d->%d size %d mode %o->%o", before.Ino, after.Ino, after.Size, before.Mode, after.Mode)
	}
	for _, p := range []string{log, ifcfg} {
		buf := make([]byte, 64)
		n, err := unix.Getxattr(p, "user.label", buf)
		if err != nil || string(buf[:n]) != "system_u:object_r:var_log_t:s0" {
			t.Errorf("%s: xattr lost: %q %v", p, buf[:n], err)
		}
	}
}
