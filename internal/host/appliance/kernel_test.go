package appliance

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kernelTree makes a /boot and a /lib/modules under a temporary
// directory: a vmlinuz-V for each of images, a modules directory with a
// modules.dep for each of mods.
func kernelTree(t *testing.T, images, mods []string) (boot, modRoot string) {
	t.Helper()
	root := t.TempDir()
	boot, modRoot = filepath.Join(root, "boot"), filepath.Join(root, "lib", "modules")
	for _, d := range []string{boot, modRoot} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range images {
		writeFile(t, filepath.Join(boot, "vmlinuz-"+v), []byte("kernel "+v), 0o644)
	}
	for _, v := range mods {
		writeFile(t, filepath.Join(modRoot, v, "modules.dep"), nil, 0o644)
	}
	return boot, modRoot
}

// TestFindKernelNewest proves that FindKernel picks the newest
// vmlinuz-* by version order, not by text (6.1.0-10 after 6.1.0-9, 6.10
// after 6.9), among the kernels whose modules directory has a
// modules.dep, whatever order the files are listed in.
func TestFindKernelNewest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		images []string
		mods   []string
		want   string
	}{
		{"abi number", []string{"6.1.0-9-cloud-amd64", "6.1.0-10-cloud-amd64", "6.1.0-8-cloud-amd64"},
			[]string{"6.1.0-9-cloud-amd64", "6.1.0-10-cloud-amd64", "6.1.0-8-cloud-amd64"}, "6.1.0-10-cloud-amd64"},
		{"minor", []string{"6.9.0", "6.10.0", "6.1.0"}, []string{"6.9.0", "6.10.0", "6.1.0"}, "6.10.0"},
		{"newest without modules", []string{"6.1.0-9-amd64", "6.12.0-1-amd64"}, []string{"6.1.0-9-amd64"}, "6.1.0-9-amd64"},
		{"one", []string{"5.10.0-30-amd64"}, []string{"5.10.0-30-amd64"}, "5.10.0-30-amd64"},
	} {
		boot, modRoot := kernelTree(t, tc.images, tc.mods)
		k, err := FindKernel("", boot, modRoot)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		want := Kernel{Path: filepath.Join(boot, "vmlinuz-"+tc.want), Version: tc.want, Modules: filepath.Join(modRoot, tc.want)}
		if k != want {
			t.Errorf("%s: %+v, want %+v", tc.name, k, want)
		}
	}
}

// TestFindKernelSkips proves what is not a bootable kernel: a newer
// vmlinuz-* whose modules directory exists without modules.dep, and a
// vmlinuz-* that is a directory.
func TestFindKernelSkips(t *testing.T) {
	boot, modRoot := kernelTree(t, []string{"6.1.0-9-amd64"}, []string{"6.1.0-9-amd64"})
	if err := os.MkdirAll(filepath.Join(modRoot, "6.1.0-20-amd64", "kernel"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(boot, "vmlinuz-6.1.0-20-amd64"), []byte("k"), 0o644)
	if err := os.MkdirAll(filepath.Join(boot, "vmlinuz-6.1.0-30-amd64"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(modRoot, "6.1.0-30-amd64", "modules.dep"), nil, 0o644)
	k, err := FindKernel("", boot, modRoot)
	if err != nil || k.Version != "6.1.0-9-amd64" {
		t.Errorf("%+v, %v; want 6.1.0-9-amd64", k, err)
	}
}

// TestFindKernelNone proves the refusal on a host without a usable
// kernel: ErrNoKernel, naming the directories and what to do about it
// (Debian's linux-image-cloud-amd64, or --appliance-kernel).
func TestFindKernelNone(t *testing.T) {
	for _, tc := range []struct {
		name         string
		images, mods []string
	}{
		{"empty", nil, nil},
		{"images without modules", []string{"6.1.0-9-amd64"}, nil},
		{"modules without images", nil, []string{"6.1.0-9-amd64"}},
	} {
		boot, modRoot := kernelTree(t, tc.images, tc.mods)
		_, err := FindKernel("", boot, modRoot)
		if !errors.Is(err, ErrNoKernel) {
			t.Errorf("%s: %v, want ErrNoKernel", tc.name, err)
			continue
		}
		for _, want := range []string{boot + "/vmlinuz-*", modRoot, NoKernelFix, "linux-image-cloud-amd64", "--appliance-kernel"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", tc.name, err, want)
			}
		}
	}
}

// TestFindKernelNamed proves --appliance-kernel: a kernel image named
// vmlinuz-VERSION finds modulesRoot/VERSION by its name; any other name
// takes the one modules directory there is; with several, or none, or a
// path that is not a regular file, the refusal names the option.
func TestFindKernelNamed(t *testing.T) {
	boot, modRoot := kernelTree(t, []string{"6.1.0-9-amd64", "6.1.0-10-amd64"}, []string{"6.1.0-9-amd64", "6.1.0-10-amd64"})
	// By its name: the older one, named, is taken over the newest.
	named := filepath.Join(boot, "vmlinuz-6.1.0-9-amd64")
	k, err := FindKernel(named, "/nonexistent", modRoot)
	want := Kernel{Path: named, Version: "6.1.0-9-amd64", Modules: filepath.Join(modRoot, "6.1.0-9-amd64")}
	if err != nil || k != want {
		t.Errorf("named by version: %+v, %v; want %+v", k, err, want)
	}

	// Another name, one modules directory.
	other := filepath.Join(t.TempDir(), "bzImage")
	writeFile(t, other, []byte("k"), 0o644)
	_, oneMods := kernelTree(t, nil, []string{"6.6.6-custom"})
	k, err = FindKernel(other, boot, oneMods)
	want = Kernel{Path: other, Version: "6.6.6-custom", Modules: filepath.Join(oneMods, "6.6.6-custom")}
	if err != nil || k != want {
		t.Errorf("named otherwise, one modules directory: %+v, %v; want %+v", k, err, want)
	}
	// A vmlinuz-VERSION whose VERSION has no directory is refused even
	// beside one other release's modules: they would not load in it.
	unknown := filepath.Join(t.TempDir(), "vmlinuz-9.9.9")
	writeFile(t, unknown, []byte("k"), 0o644)
	if k, err = FindKernel(unknown, boot, oneMods); err == nil || !strings.Contains(err.Error(), "no modules for it in "+filepath.Join(oneMods, "9.9.9")) {
		t.Errorf("vmlinuz of an unknown version, one modules directory: %+v, %v", k, err)
	}

	// Refusals.
	emptyMods := t.TempDir()
	for _, tc := range []struct {
		name, kernel, mods, want string
	}{
		{"two modules directories", other, modRoot, "--appliance-kernel " + other + ": no modules for it in " + modRoot},
		{"no modules directory", other, emptyMods, "--appliance-kernel " + other + ": no modules for it in " + emptyMods},
		{"missing file", filepath.Join(boot, "vmlinuz-absent"), modRoot, "--appliance-kernel " + filepath.Join(boot, "vmlinuz-absent") + ": not a kernel image file"},
		{"a directory", boot, modRoot, "--appliance-kernel " + boot + ": not a kernel image file"},
	} {
		_, err := FindKernel(tc.kernel, boot, tc.mods)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestVersionLess proves the release order FindKernel uses: runs of
// digits compared by value (9 < 10, leading zeros aside), other runs as
// text, a prefix before what extends it; and that it is a strict order
// (never both a<b and b<a, never a<a).
func TestVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"6.1.0-9-amd64", "6.1.0-10-amd64", true},
		{"6.1.0-10-amd64", "6.1.0-9-amd64", false},
		{"6.9", "6.10", true},
		{"6.10", "6.9", false},
		{"5.10.0-30-cloud-amd64", "6.1.0-9-cloud-amd64", true},
		{"6.1", "6.1.0", true},
		{"6.1.0", "6.1", false},
		{"6.1.0-9-amd64", "6.1.0-9-amd64", false},
		{"6.1.0-9-amd64", "6.1.0-9-cloud-amd64", true},
		{"6.1.0-9-cloud-amd64", "6.1.0-9-amd64", false},
		{"4.19.0-27-amd64", "4.19.0-100-amd64", true},
		{"10.0", "9.99", false},
		{"6.01.9", "6.1.10", true},
		{"6.1.10", "6.01.9", false},
		{"99999999999999999999999.1", "99999999999999999999999.2", true},
		{"", "1", true},
		{"1", "", false},
	} {
		if got := versionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	all := []string{"6.1.0-9-amd64", "6.1.0-10-amd64", "6.10.1", "6.9.12", "6.1", "6.1.0", "6.1-rc1", "6.01.0", "a", "a1", "1a", ""}
	for _, a := range all {
		if versionLess(a, a) {
			t.Errorf("versionLess(%q, %q)", a, a)
		}
		for _, b := range all {
			if versionLess(a, b) && versionLess(b, a) {
				t.Errorf("versionLess both ways for %q and %q", a, b)
			}
		}
	}
}
