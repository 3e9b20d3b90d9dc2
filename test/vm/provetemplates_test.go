//go:build vmtest

package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The templates sealprep prove is run on besides the unsealed one (the
// healthy guest's disk after a plain poweroff) and the sealed GPT disk
// (bootdisk_test.go): one run through virt-sysprep, one without its guest
// agent, one that cannot boot. Each is a copy: the images they come from
// are never written.

// applianceEnv is the environment virt-sysprep runs in. libguestfs boots a
// small appliance VM that supermin assembles from the host's own packages
// and a kernel, which it looks for in /boot; the build and CI machines
// have none (containers and cloud VMs boot a kernel that is not a file
// there). So the appliance gets the test image's Debian kernel
// (SUPERMIN_KERNEL) and that kernel's modules (SUPERMIN_MODULES), copied
// out of the image once (debugfs, no mount) next to it in the cache. The
// direct backend (no libvirtd), TCG (libguestfs picks KVM whenever
// /dev/kvm exists, and KVM does not run guests on these machines; see
// docs/vm-tests.md), and the appliance cached under the VM cache (built
// once, about 30 s; a run on the 3 GiB image then takes 1 to 2 minutes
// under TCG).
func applianceEnv(ctx context.Context, t *testing.T, img image) []string {
	t.Helper()
	dir := filepath.Join(filepath.Dir(img.Root), "appliance-modules")
	if _, err := os.Stat(filepath.Join(dir, "done")); err != nil {
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := run(ctx, "debugfs", "-R", "rdump /usr/lib/modules "+tmp, img.Root); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, "done"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil {
			t.Fatal(err)
		}
	}
	vers, _ := filepath.Glob(filepath.Join(dir, "modules", "*", "modules.dep"))
	if len(vers) != 1 {
		t.Fatalf("%s: want the modules of one kernel, found %d", dir, len(vers))
	}
	// supermin 5.2 copies the host's /lib/modules directory itself into
	// the appliance before the modules from SUPERMIN_MODULES, and stops
	// when it does not exist, as on a host that never had a kernel
	// package: an empty one is what a Debian host with a kernel has at
	// least.
	if err := os.MkdirAll("/lib/modules", 0o755); err != nil {
		t.Fatal(err)
	}
	appliance := filepath.Join(cacheDir(), "guestfs")
	if err := os.MkdirAll(appliance, 0o755); err != nil {
		t.Fatal(err)
	}
	return append(os.Environ(),
		"LIBGUESTFS_BACKEND=direct",
		"LIBGUESTFS_BACKEND_SETTINGS=force_tcg",
		"LIBGUESTFS_CACHEDIR="+appliance,
		"SUPERMIN_KERNEL="+img.Kernel,
		"SUPERMIN_MODULES="+filepath.Dir(vers[0]),
	)
}

// machineIDRe is a machine ID as systemd writes it.
var machineIDRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

// virtSysprepTemplate copies src (a raw whole-disk ext4 image) to out and
// runs virt-sysprep's default operations on it, as a template pipeline
// does. It returns the machine ID the result carries: virt-sysprep's
// machine-id operation empties /etc/machine-id, and then its customize
// operation (on by default) writes a new random one into it, which every
// clone boots with (docs/sealprep.md; guestfs-tools' customize_run.ml).
func virtSysprepTemplate(ctx context.Context, t *testing.T, img image, src, out string) string {
	t.Helper()
	if _, err := run(ctx, "cp", "--sparse=always", src, out); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	vctx, cancel := step(ctx, 10*time.Minute)
	defer cancel()
	c := exec.CommandContext(vctx, "virt-sysprep", "--format", "raw", "-a", out)
	c.Env = applianceEnv(ctx, t, img)
	b, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("virt-sysprep -a %s: %v\n%s", out, err, tail(string(b), 40))
	}
	t.Logf("virt-sysprep in %s:\n%s", time.Since(start).Round(time.Second), tail(string(b), 60))
	mid := strings.TrimSpace(string(debugfsCat(ctx, t, out, "/etc/machine-id")))
	if !machineIDRe.MatchString(mid) {
		t.Fatalf("virt-sysprep left /etc/machine-id %q: not the fixed ID this scenario is about", mid)
	}
	return mid
}

// debugfsCat reads a file of an ext4 image without mounting it.
func debugfsCat(ctx context.Context, t *testing.T, img, path string) []byte {
	t.Helper()
	out, err := exec.CommandContext(ctx, "debugfs", "-R", "cat "+path, img).Output()
	if err != nil {
		t.Fatalf("debugfs cat %s in %s: %v", path, img, err)
	}
	return out
}

// rootPartition copies partition 2 of the GPT disk gpt (gptDisk's root) to
// out, a whole-disk filesystem image to boot with --kernel.
func rootPartition(ctx context.Context, t *testing.T, gpt, out string) {
	t.Helper()
	st, err := os.Stat(gpt)
	if err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	n := (st.Size() - rootStart*sectorSize - gptTail) / mib
	if _, err := run(ctx, "dd", "if="+gpt, "of="+out, "bs=1M", fmt.Sprintf("skip=%d", rootStart*sectorSize/mib),
		fmt.Sprintf("count=%d", n), "conv=sparse", "status=none"); err != nil {
		t.Fatal(err)
	}
}

// editTemplate copies src (a whole-disk filesystem image) to out and runs
// edit on it, loop-mounted at a directory it is given: an offline change
// made as an image build's last step would make it, not through sealprep.
func editTemplate(ctx context.Context, t *testing.T, src, out string, edit func(root string) error) {
	t.Helper()
	if _, err := run(ctx, "cp", "--sparse=always", src, out); err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	if _, err := run(ctx, "mount", "-o", "loop", out, mnt); err != nil {
		t.Fatal(err)
	}
	eerr := edit(mnt)
	if _, err := run(context.Background(), "umount", mnt); err != nil {
		t.Error(err)
	}
	if eerr != nil {
		t.Fatalf("edit %s: %v", out, eerr)
	}
}

// maskAgent masks qemu-guest-agent.service, as `systemctl mask` does: a
// template whose agent never starts, which prove must judge from the
// serial console.
func maskAgent(root string) error {
	return os.Symlink("/dev/null", filepath.Join(root, "etc/systemd/system/qemu-guest-agent.service"))
}

// missingDevice is the fstab line that keeps a template from booting: a
// filesystem by a label no disk has, required (no nofail), that systemd
// waits 5 s for (x-systemd.device-timeout) before local-fs.target fails
// and the boot ends in emergency mode, so the failure shows at once on
// the console.
const missingDevice = "LABEL=gc-missing\t/srv/gc-missing\text4\tdefaults,x-systemd.device-timeout=5s\t0\t2\n"

// breakFstab appends missingDevice to the template's fstab.
func breakFstab(root string) error {
	f, err := os.OpenFile(filepath.Join(root, "etc/fstab"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(missingDevice); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// regenKeysUnit is a per-boot unit that throws the SSH host keys away and
// makes new ones before sshd starts, at every boot: an image that passes
// one boot and breaks every client's known_hosts at the next.
const regenKeysUnit = `[Unit]
Description=Regenerate the SSH host keys at every boot (a template mistake)
Before=ssh.service
After=local-fs.target

[Service]
Type=oneshot
ExecStart=/bin/sh -c 'rm -f /etc/ssh/ssh_host_*; ssh-keygen -A'

[Install]
WantedBy=multi-user.target
`

// regenKeys installs and enables regenKeysUnit.
func regenKeys(root string) error {
	unit := filepath.Join(root, "etc/systemd/system/gc-regen-keys.service")
	if err := os.WriteFile(unit, []byte(regenKeysUnit), 0o644); err != nil {
		return err
	}
	wants := filepath.Join(root, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	return os.Symlink("/etc/systemd/system/gc-regen-keys.service", filepath.Join(wants, "gc-regen-keys.service"))
}
