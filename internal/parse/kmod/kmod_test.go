package kmod

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const dep = `kernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko
kernel/lib/libcrc32c.ko:
kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_ring.ko:
kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko
kernel/drivers/virtio/virtio_pci_legacy_dev.ko:
kernel/drivers/virtio/virtio_pci_modern_dev.ko:
kernel/fs/btrfs/btrfs.ko.xz: kernel/lib/raid6/raid6_pq.ko.xz kernel/lib/libcrc32c.ko
kernel/lib/raid6/raid6_pq.ko.xz:
kernel/arch/x86/crypto/crc32c-intel.ko:
`

func testIndex(t *testing.T) *Index {
	t.Helper()
	idx := &Index{}
	if p := idx.ParseDep([]byte(dep)); len(p) != 0 {
		t.Fatal(p)
	}
	if p := idx.ParseSoftdep([]byte("# comment\nsoftdep btrfs pre: crypto-crc32c blake2b-256 post: nothing\n")); len(p) != 0 {
		t.Fatal(p)
	}
	if p := idx.ParseAlias([]byte("alias crypto-crc32c crc32c-intel\nalias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci\n")); len(p) != 0 {
		t.Fatal(p)
	}
	if p := idx.ParseBuiltin([]byte("kernel/fs/ext4/ext4.ko\nkernel/drivers/block/virtio_blk.ko\n")); len(p) != 0 {
		t.Fatal(p)
	}
	return idx
}

// TestResolve: dependencies before what needs them, each once; softdeps
// through their aliases, an unresolvable softdep skipped; built-in
// modules not loaded; an unknown module named as missing.
func TestResolve(t *testing.T) {
	idx := testIndex(t)
	order, missing := idx.Resolve([]string{"virtio_pci", "virtio-blk", "ext4", "xfs", "btrfs", "nosuchfs"})
	want := []string{"virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci", "libcrc32c", "xfs", "crc32c_intel", "raid6_pq", "btrfs"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order %v\nwant  %v", order, want)
	}
	if !reflect.DeepEqual(missing, []string{"nosuchfs"}) {
		t.Errorf("missing %v", missing)
	}
	if idx.Path["btrfs"] != "kernel/fs/btrfs/btrfs.ko.xz" || !idx.Builtin["virtio_blk"] {
		t.Errorf("index %v %v", idx.Path, idx.Builtin)
	}
}

// TestProblems: lines that are not depmod's are named by number and
// skipped; paths that climb out of the modules directory are refused.
func TestProblems(t *testing.T) {
	idx := &Index{}
	p := idx.ParseDep([]byte("kernel/a.ko:\nnot a line\n../../etc/shadow.ko:\n/abs/b.ko:\nkernel/c.ko: ../d.ko\n"))
	if len(p) != 4 || p[0].Line != 2 || p[1].Line != 3 || p[2].Line != 4 || p[3].Line != 5 {
		t.Errorf("problems %v", p)
	}
	if len(idx.Path) != 1 || idx.Path["a"] != "kernel/a.ko" {
		t.Errorf("kept %v", idx.Path)
	}
	if p := idx.ParseAlias([]byte("alias x\n")); len(p) != 1 {
		t.Errorf("alias problems %v", p)
	}
	if p := idx.ParseSoftdep([]byte("options x y\n")); len(p) != 1 {
		t.Errorf("softdep problems %v", p)
	}
}

// TestCycle: a hostile modules.dep whose modules need each other ends.
func TestCycle(t *testing.T) {
	idx := &Index{}
	idx.ParseDep([]byte("a.ko: b.ko\nb.ko: a.ko\n"))
	order, _ := idx.Resolve([]string{"a"})
	if !slices.Equal(order, []string{"b", "a"}) {
		t.Errorf("order %v", order)
	}
}

// TestHostKernel reads the host's own index, where a kernel is
// installed, and resolves what the appliance loads: every path exists.
func TestHostKernel(t *testing.T) {
	dirs, _ := filepath.Glob("/lib/modules/*/modules.dep")
	if len(dirs) == 0 {
		t.Skip("no kernel modules installed on this host (/lib/modules/*/modules.dep)")
	}
	dir := filepath.Dir(dirs[0])
	idx := &Index{}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if p := idx.ParseDep(read("modules.dep")); len(p) != 0 {
		t.Errorf("modules.dep: %v", p[0])
	}
	if p := idx.ParseSoftdep(read("modules.softdep")); len(p) != 0 {
		t.Errorf("modules.softdep: %v", p[0])
	}
	if p := idx.ParseAlias(read("modules.alias")); len(p) != 0 {
		t.Errorf("modules.alias: %v", p[0])
	}
	if p := idx.ParseBuiltin(read("modules.builtin")); len(p) != 0 {
		t.Errorf("modules.builtin: %v", p[0])
	}
	order, missing := idx.Resolve([]string{"virtio_pci", "virtio_blk", "virtio_console", "loop", "ext4", "xfs", "btrfs", "vfat", "nls_cp437", "nls_ascii"})
	if len(missing) != 0 {
		t.Errorf("missing %v", missing)
	}
	for _, m := range order {
		if _, err := os.Stat(filepath.Join(dir, idx.Path[m])); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if !slices.Contains(order, "xfs") || !strings.Contains(strings.Join(order, " "), "virtio_pci") {
		t.Errorf("order %v", order)
	}
}
