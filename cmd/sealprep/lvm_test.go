package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/seal"
)

// TestImageLVM: the RHEL family's layout, a /boot partition and the root
// in an LVM volume group (made by the real lvm2 tools), with /var on a
// second, XFS, volume that fstab names as /dev/rhel/var: the appliance
// reads the LVM2 metadata in Go, maps both linear volumes with its own
// device mapper (read-only for plan and verify), finds the root by its
// os-release, mounts /var and /boot from fstab, and seals; verify agrees.
// On the host-kernel path the same image is refused in one line: the
// host never activates an image's volumes.
func TestImageLVM(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	bin := sealprepBinary(t)
	for _, qcow2 := range []bool{false, true} {
		dir := t.TempDir()
		state := filepath.Join(dir, "state")
		root := imagetest.Tree(t, map[string]string{
			"etc/os-release":          "ID=rhel\nVERSION_ID=9.4\n",
			"etc/machine-id":          "5f1c0a9e2b7d4c3a8e6f0b1d2c3a4e5f\n",
			"var/":                    "",
			"boot/":                   "",
			"etc/fstab":               "/dev/mapper/rhel-root / ext4 defaults 0 0\nLABEL=boot /boot ext4 defaults 0 0\n/dev/rhel/var /var xfs defaults 0 0\n/dev/mapper/rhel-swap none swap defaults 0 0\n",
			"root/.bash_history":      "ls\n",
			"var/lib/dbus/machine-id": "5f1c0a9e2b7d4c3a8e6f0b1d2c3a4e5f\n",
		})
		img := imagetest.BuildLVM(t, dir, "rhel", []imagetest.Part{
			{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 16, Label: "boot", Tree: imagetest.Tree(t, map[string]string{"loader/": ""})},
		}, "rhel", []imagetest.Volume{
			{Name: "root", SizeMiB: 32, FS: "ext4", Tree: root},
			{Name: "swap", SizeMiB: 4, FS: "ext4"},
			{Name: "var", SizeMiB: 300, FS: "xfs"},
		}, qcow2)
		before := imagetest.Hash(t, img)
		out, stderr, code := runBin(t, bin, state, "plan", "--image", img, "--format", "json")
		if code != seal.ExitOK {
			t.Fatalf("plan: exit %d\n%s\n%s", code, out, stderr)
		}
		var rep seal.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, m := range rep.Image.Mounts {
			got[m.Path] = m.Name()
		}
		want := map[string]string{"/": "logical volume rhel/root (ext4)", "/boot": "partition 1 (ext4, LABEL=boot)", "/var": "logical volume rhel/var (xfs)"}
		for p, w := range want {
			if !strings.HasPrefix(got[p], strings.TrimSuffix(w, ")")) {
				t.Errorf("%s mounted from %q, want %q (mounts %v, notes %v)", p, got[p], w, got, rep.Image.Notes)
			}
		}
		if imagetest.Hash(t, img) != before {
			t.Fatal("plan --image changed an LVM image")
		}
		out, stderr, code = runBin(t, bin, state, "apply", "--yes", "--image", img)
		if code != seal.ExitOK || !strings.Contains(out, "SEALED") {
			t.Fatalf("apply: exit %d\n%s\n%s", code, out, stderr)
		}
		out, stderr, code = runBin(t, bin, state, "verify", "--image", img)
		if code != seal.ExitOK || !strings.Contains(out, "SEALED") || !strings.Contains(out, "logical volume rhel/root") {
			t.Fatalf("verify: exit %d\n%s\n%s", code, out, stderr)
		}
		out, _, code = runBin(t, bin, state, "plan", "--image", img, "--trust-image-filesystems")
		if code != seal.ExitUsage || !strings.Contains(out, "partition 2 (lvm) is an LVM physical volume") {
			t.Errorf("--trust-image-filesystems on LVM: exit %d\n%s", code, out)
		}
		checkNoLeftovers(t, state, img)
	}
}
