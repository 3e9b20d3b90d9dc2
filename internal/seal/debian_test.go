package seal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// debianInputs are what the cached tree is built from; the cache key is
// their hash, so changing them builds a new tree.
var debianInputs = []string{"mmdebstrap", "--variant=minbase", "--include=openssh-server,cloud-init,systemd-sysv,dbus", "bookworm"}

// debianTarball returns a cached tarball of a real Debian 12 root built by
// mmdebstrap (about a minute the first time), outside the repository:
// $SEALPREP_DEBIAN_CACHE, else /var/tmp/sealprep-debian-cache.
func debianTarball(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a real Debian tree with mmdebstrap; skipped with -short")
	}
	testenv.RequireRoot(t, "needs root: mmdebstrap and the tree's root-owned files")
	mmdebstrap := testenv.Tool(t, "mmdebstrap", "mmdebstrap")
	dir := os.Getenv("SEALPREP_DEBIAN_CACHE")
	if dir == "" {
		dir = "/var/tmp/sealprep-debian-cache"
	}
	sum := sha256.Sum256([]byte(strings.Join(debianInputs, "\x00")))
	tarball := filepath.Join(dir, "debian-"+hex.EncodeToString(sum[:6])+".tar")
	if _, err := os.Stat(tarball); err == nil {
		return tarball
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// mmdebstrap picks its output format from the name: keep ".tar" last.
	tmp := strings.TrimSuffix(tarball, ".tar") + ".part.tar"
	os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	args := append(append([]string{"--format=tar"}, debianInputs[1:]...), tmp)
	start := time.Now()
	if out, err := exec.CommandContext(ctx, mmdebstrap, args...).CombinedOutput(); err != nil {
		t.Fatalf("mmdebstrap: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, tarball); err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %v", tarball, time.Since(start).Round(time.Second))
	return tarball
}

// extractDebian unpacks the tarball, without documentation, locales and
// Python, which no operation reads.
func extractDebian(t *testing.T, tarball string) string {
	t.Helper()
	dir := scratchDir(t)
	out, err := exec.Command("tar", "-xf", tarball, "-C", dir, "--numeric-owner",
		"--exclude=./dev/*", "--exclude=./usr/share/*", "--exclude=./usr/lib/python3*", "--exclude=./var/lib/apt/lists/*").CombinedOutput()
	if err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	return dir
}

// useDebian makes the fresh tree look like a VM that ran: identity that
// mmdebstrap does not leave behind.
func useDebian(t *testing.T, dir string) {
	t.Helper()
	build(t, dir, []node{
		fm("/var/lib/systemd/random-seed", "SEED", 0o600),
		f("/var/lib/dhcp/dhclient.eth0.leases", "lease { fixed-address 192.0.2.10; }\n"),
		f("/var/log/journal/4f6b1c0e9a2d4e7f8a1b2c3d4e5f6a7b/system.journal", "LPKSHHRH"),
		f("/var/lib/cloud/data/instance-id", "iid-template\n"),
		l("/var/lib/cloud/instance", "/var/lib/cloud/instances/iid-template"),
		f("/var/lib/cloud/instances/iid-template/user-data.txt", "#cloud-config\n"),
		f("/var/log/cloud-init.log", "log"),
		f("/var/log/syslog", "template kernel: boot\n"),
		f("/root/.bash_history", "ls\n"),
		f("/tmp/build.txt", "x"),
	})
	must(t, os.WriteFile(filepath.Join(dir, "etc/machine-id"), []byte(oldMachineID), 0o444))
	// Debian's dbus may leave a regular copy; make sure one is there.
	os.Remove(filepath.Join(dir, "var/lib/dbus/machine-id"))
	must(t, os.WriteFile(filepath.Join(dir, "var/lib/dbus/machine-id"), []byte(oldMachineID), 0o444))
}

// TestRealDebian seals a real Debian 12 tree (root only, mmdebstrap),
// with cloud-init regenerating host keys, then without cloud-init, where
// sealprep installs its unit, whose ssh-keygen -A is run in a chroot of
// the sealed tree to prove it regenerates the keys.
func TestRealDebian(t *testing.T) {
	tarball := debianTarball(t)
	ops, _ := Select(All, "defaults")
	for _, variant := range []string{"cloud-init", "no-cloud-init"} {
		t.Run(variant, func(t *testing.T) {
			dir := extractDebian(t, tarball)
			useDebian(t, dir)
			if variant == "no-cloud-init" {
				must(t, os.Remove(filepath.Join(dir, "usr/bin/cloud-init")))
			}
			root := openRoot(t, dir)
			if refs, _ := Preflight(root, Options{}, true, nil); len(refs) > 0 {
				t.Fatalf("preflight refused a real Debian tree: %+v", refs)
			}
			plan, res := applyAll(t, root, ops, Options{})
			if len(plan.Refusals) > 0 || len(plan.Errors) > 0 {
				t.Fatalf("refusals %+v errors %+v", plan.Refusals, plan.Errors)
			}
			for _, r := range res {
				if r.Status == Failed {
					t.Errorf("%s %s: %s", r.Kind, r.Path, r.Error)
				}
			}
			if after := MakePlan(context.Background(), root, ops, Options{}); len(after.Actions) > 0 {
				t.Fatalf("plan after apply: %+v", after.Actions)
			}
			checkSealed(t, dir, "real-debian", false)
			unit := filepath.Join(dir, identity.KeygenUnitPath)
			_, err := os.Stat(unit)
			if variant == "cloud-init" && err == nil {
				t.Error("keygen unit installed although cloud-init regenerates the keys")
			}
			if variant == "no-cloud-init" {
				if err != nil {
					t.Fatalf("keygen unit not installed: %v", err)
				}
				// What systemd gives the unit: a /dev/null at least.
				build(t, dir, []node{{"/dev/null", 'c', "1:3", 0}})
				out, err := exec.Command("chroot", dir, "/usr/bin/ssh-keygen", "-A").CombinedOutput()
				if err != nil {
					t.Fatalf("ssh-keygen -A in the sealed tree: %v\n%s", err, out)
				}
				if m, _ := filepath.Glob(filepath.Join(dir, "etc/ssh/ssh_host_*_key")); len(m) == 0 {
					t.Error("ssh-keygen -A regenerated no host key")
				}
			}
		})
	}
}
