package appliance

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyELF is a whole x86-64 Linux executable of a few hundred bytes whose
// code is exit(0): with interp "" it is static, as the appliance's /init
// must be; with an interpreter it has the PT_INTERP header of a
// dynamically linked program (and is never run).
func tinyELF(interp string) []byte {
	const base = 0x400000
	code := []byte{
		0x31, 0xff, // xor edi, edi
		0xb8, 0x3c, 0x00, 0x00, 0x00, // mov eax, 60 (exit)
		0x0f, 0x05, // syscall
	}
	nprog := 1
	if interp != "" {
		nprog = 2
	}
	hdrEnd := 64 + 56*nprog
	interpOff := hdrEnd
	codeOff := interpOff
	if interp != "" {
		codeOff += len(interp) + 1
	}
	total := codeOff + len(code)
	var buf bytes.Buffer
	h := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Entry: base + uint64(codeOff), Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: uint16(nprog), Shentsize: 64,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	binary.Write(&buf, binary.LittleEndian, h)
	if interp != "" {
		binary.Write(&buf, binary.LittleEndian, elf.Prog64{
			Type: uint32(elf.PT_INTERP), Flags: uint32(elf.PF_R), Off: uint64(interpOff),
			Vaddr: base + uint64(interpOff), Paddr: base + uint64(interpOff),
			Filesz: uint64(len(interp) + 1), Memsz: uint64(len(interp) + 1), Align: 1,
		})
	}
	binary.Write(&buf, binary.LittleEndian, elf.Prog64{
		Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R | elf.PF_X), Off: 0, Vaddr: base, Paddr: base,
		Filesz: uint64(total), Memsz: uint64(total), Align: 0x1000,
	})
	if interp != "" {
		buf.WriteString(interp)
		buf.WriteByte(0)
	}
	buf.Write(code)
	return buf.Bytes()
}

// writeFile writes a test fixture, failing the test on error.
func writeFile(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

// staticInit writes tinyELF's static executable into dir.
func staticInit(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "sealprep-static")
	writeFile(t, p, tinyELF(""), 0o755)
	return p
}

// fakeDep is the fake kernel's modules.dep: the base modules with the
// virtio core they need, ext4 with its dependencies, and a compressed
// crc32c_generic (the kernel's own layout, deepest dependency last).
var fakeDep = []string{
	"kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/virtio/virtio_pci_modern_dev.ko:",
	"kernel/drivers/virtio/virtio_ring.ko:",
	"kernel/drivers/virtio/virtio.ko:",
	"kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/char/virtio_console.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko",
	"kernel/drivers/block/loop.ko:",
	"kernel/fs/ext4/ext4.ko: kernel/fs/mbcache.ko kernel/fs/jbd2/jbd2.ko kernel/lib/crc16.ko",
	"kernel/fs/mbcache.ko:",
	"kernel/fs/jbd2/jbd2.ko:",
	"kernel/lib/crc16.ko:",
	"kernel/crypto/crc32c_generic.ko.xz:",
}

// fakeModules writes a kernel modules directory at dir: modules.dep
// (fakeDep without the lines of the modules in drop), modules.softdep
// (ext4 wants crc32c first, by alias), modules.alias, modules.builtin
// (sha256_generic) and a small file for every module path named.
func fakeModules(t *testing.T, dir string, drop ...string) {
	t.Helper()
	var dep []string
	for _, l := range fakeDep {
		mod, _, _ := strings.Cut(l, ":")
		skip := false
		for _, d := range drop {
			if strings.Contains(mod, "/"+d+".ko") {
				skip = true
			}
		}
		if skip {
			continue
		}
		dep = append(dep, l)
		writeFile(t, filepath.Join(dir, mod), []byte("fake module "+mod+"\n"), 0o644)
	}
	writeFile(t, filepath.Join(dir, "modules.dep"), []byte(strings.Join(dep, "\n")+"\n"), 0o644)
	writeFile(t, filepath.Join(dir, "modules.softdep"), []byte("# Soft dependencies\nsoftdep ext4 pre: crc32c\n"), 0o644)
	writeFile(t, filepath.Join(dir, "modules.alias"), []byte("alias crypto-crc32c crc32c_generic\nalias crc32c crc32c_generic\nalias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci\n"), 0o644)
	writeFile(t, filepath.Join(dir, "modules.builtin"), []byte("kernel/crypto/sha256_generic.ko\n"), 0o644)
}
