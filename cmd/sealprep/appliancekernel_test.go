package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/seal"
)

// TestApplianceKernelRefused: a kernel the appliance cannot boot is a
// refusal in one line that names the fix, exit 3, the image untouched,
// and never a silent fall back to mounting on the host (the report has
// no mounts and no appliance section).
func TestApplianceKernelRefused(t *testing.T) {
	requireImage(t)
	bin := sealprepBinary(t)
	dir := t.TempDir()
	img := imagetest.Build(t, dir, "disk", []imagetest.Part{{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 16,
		Tree: imagetest.Tree(t, map[string]string{"etc/os-release": "ID=debian\n"})}}, false)
	before := imagetest.Hash(t, img)
	modless := filepath.Join(dir, "vmlinuz-9.9.9-none")
	os.WriteFile(modless, []byte("not a kernel"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--appliance-kernel", modless}, "--appliance-kernel " + modless + ": no modules for it in /lib/modules/9.9.9-none"},
		{[]string{"--appliance-kernel", filepath.Join(dir, "missing")}, "not a kernel image file"},
	}
	if _, err := os.Stat("/dev/kvm"); err != nil {
		// Where KVM is missing, --accel kvm is a refusal, not TCG.
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"--accel", "kvm"}, "--accel kvm: /dev/kvm"})
	}
	for _, c := range cases {
		out, stderr, code := runBin(t, bin, filepath.Join(dir, "state"), append([]string{"apply", "--yes", "--image", img}, c.args...)...)
		if code != seal.ExitUsage || !strings.Contains(out, "[image] ") || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want 3 and %q:\n%s%s", c.args, code, c.want, out, stderr)
		}
		if strings.Contains(out, "attached") || strings.Contains(out, "appliance: kernel") {
			t.Errorf("%v: the refused run attached or booted something:\n%s", c.args, out)
		}
	}
	if imagetest.Hash(t, img) != before {
		t.Error("a refused run changed the image")
	}
	checkNoLeftovers(t, filepath.Join(dir, "state"), img)
}
