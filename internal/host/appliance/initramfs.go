package appliance

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/kmod"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Paths inside the appliance's initramfs.
const (
	// ModuleDir holds the modules, by their file's base name.
	ModuleDir = "lib/modules"
	// ModuleList names them in load order, one base name a line.
	ModuleList = "etc/sealprep-appliance/modules"
	// JobFile is the run's job, in an archive of its own after the
	// cached one.
	JobFile = "etc/sealprep-appliance/job.json"
)

// BaseModules are what every appliance loads: the virtio PCI transport,
// block device and console (the report's port), loop devices (the
// image's partitions are attached on them inside the appliance, as the
// host path attaches them on the host).
var BaseModules = []string{"virtio_pci", "virtio_blk", "virtio_console", "loop"}

// OptionalModules speed the appliance up where the kernel has them: the
// virtio RNG gives its kernel entropy at once.
var OptionalModules = []string{"virtio_rng"}

// FSModules are the modules (or aliases) each filesystem type sealprep
// mounts needs; the kernel asks modprobe for the checksum algorithms a
// filesystem uses, and the appliance has no modprobe, so they are named.
var FSModules = map[string][]string{
	"ext2":  {"ext4", "crc32c_generic", "crc32c_intel"},
	"ext3":  {"ext4", "crc32c_generic", "crc32c_intel"},
	"ext4":  {"ext4", "crc32c_generic", "crc32c_intel"},
	"xfs":   {"xfs", "crc32c_generic", "crc32c_intel"},
	"btrfs": {"btrfs", "crc32c_generic", "crc32c_intel", "xxhash_generic", "sha256_generic", "blake2b_generic"},
	"vfat":  {"vfat", "nls_cp437", "nls_ascii", "nls_iso8859_1"},
	// An LVM physical volume: the device mapper, to map its logical
	// volumes.
	"lvm": {"dm_mod"},
}

// Index reads the kernel's depmod index files; a missing modules.dep is
// an error, the others may be absent.
func (k Kernel) Index() (*kmod.Index, error) {
	idx := &kmod.Index{}
	for _, f := range []struct {
		name  string
		parse func([]byte) []problem.Problem
		need  bool
	}{
		{"modules.dep", idx.ParseDep, true},
		{"modules.softdep", idx.ParseSoftdep, false},
		{"modules.alias", idx.ParseAlias, false},
		{"modules.builtin", idx.ParseBuiltin, false},
	} {
		p := filepath.Join(k.Modules, f.name)
		b, err := readLimit(p, 64<<20)
		if err != nil {
			if f.need || !errors.Is(err, os.ErrNotExist) {
				return nil, err
			}
			continue
		}
		if probs := f.parse(b); len(probs) > 0 {
			return nil, fmt.Errorf("%s", probs[0].In(p))
		}
	}
	return idx, nil
}

// ModulesFor resolves what an appliance for the filesystem types fsTypes
// loads, in load order, as paths under k.Modules. Optional helpers
// (checksum drivers) that this kernel lacks or builds in are left out; a
// missing module the appliance needs is an error naming it.
func (k Kernel) ModulesFor(fsTypes []string) ([]string, error) {
	idx, err := k.Index()
	if err != nil {
		return nil, err
	}
	need := append([]string(nil), BaseModules...)
	optional := append([]string(nil), OptionalModules...)
	for _, t := range fsTypes {
		mods := FSModules[t]
		if len(mods) == 0 {
			continue
		}
		need = append(need, mods[0])
		optional = append(optional, mods[1:]...)
	}
	order, missing := idx.Resolve(append(need, optional...))
	var hard []string
	for _, m := range missing {
		if !contains(optional, m) {
			hard = append(hard, m)
		}
	}
	if len(hard) > 0 {
		return nil, fmt.Errorf("kernel %s has no module %s (neither in %s/modules.dep nor built in)", k.Version, strings.Join(hard, ", "), k.Modules)
	}
	var paths []string
	for _, m := range order {
		paths = append(paths, idx.Path[m])
	}
	return paths, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// BuildInitramfs writes (or finds in cacheDir) the appliance's
// initramfs: init as /init, the modules (paths under k.Modules) and their
// load order. Its name is the SHA-256 of its content, so a changed
// sealprep or kernel gets a new one and an unchanged one is reused.
func BuildInitramfs(cacheDir, init string, k Kernel, modules []string) (string, error) {
	if err := staticELF(init); err != nil {
		return "", err
	}
	// Written twice, streamed from the files: once into the hash that
	// names it, then, unless the cache has it, into the cache. The
	// archive (sealprep and the modules, 10 MiB and more) is never held
	// in memory.
	write := func(w io.Writer) error { return writeInitramfs(w, init, k, modules) }
	sum, size, err := hashOf(write)
	if err != nil {
		return "", err
	}
	path := filepath.Join(cacheDir, "initramfs-"+hex.EncodeToString(sum[:16])+".cpio")
	if st, err := os.Stat(path); err == nil && st.Size() == size {
		return path, nil
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", err
	}
	again := func(w io.Writer) error {
		h := sha256.New()
		if err := write(io.MultiWriter(w, h)); err != nil {
			return err
		}
		if !bytes.Equal(h.Sum(nil), sum[:]) {
			return fmt.Errorf("sealprep or the kernel's modules changed while the appliance's initramfs was built; run again")
		}
		return nil
	}
	if err := writeCache(cacheDir, path, again); err != nil {
		return "", err
	}
	return path, nil
}

// hashOf is the SHA-256 and the size of what write writes.
func hashOf(write func(io.Writer) error) ([sha256.Size]byte, int64, error) {
	h := sha256.New()
	n := &counter{}
	var sum [sha256.Size]byte
	if err := write(io.MultiWriter(h, n)); err != nil {
		return sum, 0, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, n.n, nil
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// writeInitramfs writes the archive: the mount points, init as /init, the
// modules and their load order.
func writeInitramfs(out io.Writer, init string, k Kernel, modules []string) error {
	bw := bufio.NewWriterSize(out, 256<<10)
	w := &cpioWriter{w: bw}
	for _, d := range []string{"dev", "proc", "sys", "run", "tmp", "etc", "etc/sealprep-appliance", "lib", ModuleDir} {
		w.Dir(d)
	}
	if err := addFile(w, "init", 0o755, init, 256<<20); err != nil {
		return err
	}
	var names []string
	for _, m := range modules {
		name := filepath.Base(m)
		if err := addFile(w, ModuleDir+"/"+name, 0o644, filepath.Join(k.Modules, m), 64<<20); err != nil {
			return fmt.Errorf("kernel %s: %w", k.Version, err)
		}
		names = append(names, name)
	}
	w.File(ModuleList, 0o644, []byte(strings.Join(names, "\n")+"\n"))
	if err := w.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// addFile streams the host file src, of at most limit bytes, into the
// archive as name.
func addFile(w *cpioWriter, name string, perm uint32, src string, limit int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() || st.Size() > limit {
		return fmt.Errorf("%s: not a regular file of at most %d MiB", src, limit>>20)
	}
	w.FileFrom(name, perm, st.Size(), f)
	return w.err
}

// JobArchive is the run's job as a cpio archive of its own, which the
// kernel unpacks after the cached initramfs.
func JobArchive(job []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := &cpioWriter{w: &buf}
	w.File(JobFile, 0o600, job)
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// staticELF refuses an init the appliance's kernel cannot run: not an
// ELF executable, or one that needs a dynamic loader the initramfs does
// not have (a sealprep built with cgo).
func staticELF(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("the appliance's init %s is not an executable: %v", p, err)
	}
	defer f.Close()
	for _, ph := range f.Progs {
		if ph.Type == elf.PT_INTERP {
			return fmt.Errorf("the appliance's init %s is dynamically linked; build sealprep with CGO_ENABLED=0", p)
		}
	}
	return nil
}

// readLimit reads a host file of at most limit bytes.
func readLimit(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: larger than %d MiB", p, limit>>20)
	}
	b := make([]byte, st.Size())
	_, err = io.ReadFull(f, b)
	return b, err
}
