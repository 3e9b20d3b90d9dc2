package appliance

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestTinyELF proves the fixtures the initramfs and Run tests use as
// sealprep: the static one is an executable the kernel runs (exit 0),
// and only the other has a PT_INTERP header.
func TestTinyELF(t *testing.T) {
	dir := t.TempDir()
	p := staticInit(t, dir)
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if out, err := exec.Command(p).CombinedOutput(); err != nil {
			t.Fatalf("the static fixture does not run: %v %s", err, out)
		}
	}
	for _, tc := range []struct {
		interp string
		want   bool
	}{{"", false}, {"/lib64/ld-linux-x86-64.so.2", true}} {
		f, err := elf.NewFile(bytes.NewReader(tinyELF(tc.interp)))
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, ph := range f.Progs {
			has = has || ph.Type == elf.PT_INTERP
		}
		if has != tc.want {
			t.Errorf("interp %q: PT_INTERP %v", tc.interp, has)
		}
	}
}

// TestModulesFor proves the modules an appliance loads, in load order:
// the base modules and each filesystem's, their modules.dep
// dependencies first (deepest first) and softdep pre: modules through
// modules.alias; a checksum driver this kernel lacks (crc32c_intel) or
// builds in (sha256_generic) is left out; an unknown filesystem type
// adds nothing.
func TestModulesFor(t *testing.T) {
	dir := t.TempDir()
	fakeModules(t, dir)
	k := Kernel{Version: "6.1.0-test", Modules: dir}
	base := []string{
		"kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_ring.ko",
		"kernel/drivers/virtio/virtio_pci_modern_dev.ko", "kernel/drivers/virtio/virtio_pci.ko",
		"kernel/drivers/block/virtio_blk.ko", "kernel/drivers/char/virtio_console.ko", "kernel/drivers/block/loop.ko",
	}
	ext4 := []string{"kernel/crypto/crc32c_generic.ko.xz", "kernel/lib/crc16.ko", "kernel/fs/jbd2/jbd2.ko", "kernel/fs/mbcache.ko", "kernel/fs/ext4/ext4.ko"}
	for _, tc := range []struct {
		fs   []string
		want []string
	}{
		{nil, base},
		{[]string{"swap", "ntfs3"}, base},
		{[]string{"ext4"}, append(append([]string(nil), base...), ext4...)},
		{[]string{"ext2", "ext4", "ext3"}, append(append([]string(nil), base...), ext4...)},
	} {
		got, err := k.ModulesFor(tc.fs)
		if err != nil {
			t.Errorf("%v: %v", tc.fs, err)
			continue
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v:\n got %q\nwant %q", tc.fs, got, tc.want)
		}
	}
}

// TestModulesForMissing proves that a module the appliance needs and the
// kernel does not have is an error naming every such module, the
// kernel's version and its modules directory, while a missing optional
// helper is not; a base module the kernel builds in needs nothing, and a
// kernel without a readable modules.dep is refused.
func TestModulesForMissing(t *testing.T) {
	dir := t.TempDir()
	fakeModules(t, dir)
	k := Kernel{Version: "6.1.0-test", Modules: dir}
	// vfat's nls_* helpers and btrfs's checksums are optional; vfat and
	// btrfs themselves are not.
	_, err := k.ModulesFor([]string{"vfat", "ext4", "btrfs"})
	want := "kernel 6.1.0-test has no module vfat, btrfs (neither in " + dir + "/modules.dep nor built in)"
	if err == nil || err.Error() != want {
		t.Errorf("missing filesystems: %v\nwant %s", err, want)
	}

	noLoop := t.TempDir()
	fakeModules(t, noLoop, "loop")
	k = Kernel{Version: "6.1.0-noloop", Modules: noLoop}
	if _, err := k.ModulesFor(nil); err == nil || !strings.Contains(err.Error(), "has no module loop ") {
		t.Errorf("missing base module: %v", err)
	}
	writeFile(t, filepath.Join(noLoop, "modules.builtin"), []byte("kernel/drivers/block/loop.ko\n"), 0o644)
	got, err := k.ModulesFor(nil)
	if err != nil || strings.Contains(strings.Join(got, " "), "loop") || len(got) != 6 {
		t.Errorf("built-in loop: %q, %v", got, err)
	}

	// Only modules.dep is needed; without it, nothing.
	only := t.TempDir()
	fakeModules(t, only)
	for _, f := range []string{"modules.softdep", "modules.alias", "modules.builtin"} {
		os.Remove(filepath.Join(only, f))
	}
	if got, err := (Kernel{Modules: only}).ModulesFor([]string{"ext4"}); err != nil || len(got) != 12 || got[11] != "kernel/crypto/crc32c_generic.ko.xz" {
		t.Errorf("modules.dep alone: %q, %v", got, err)
	}
	os.Remove(filepath.Join(only, "modules.dep"))
	if _, err := (Kernel{Modules: only}).ModulesFor(nil); err == nil {
		t.Error("no modules.dep: no error")
	}
	// A modules.dep that is not one is refused, naming the file.
	writeFile(t, filepath.Join(only, "modules.dep"), []byte("../../etc/shadow.ko:\n"), 0o644)
	if _, err := (Kernel{Modules: only}).ModulesFor(nil); err == nil || !strings.Contains(err.Error(), filepath.Join(only, "modules.dep")) {
		t.Errorf("a bad modules.dep: %v", err)
	}
}

// cpioExtract extracts an archive with GNU cpio into a new directory.
func cpioExtract(t *testing.T, archive []byte) string {
	t.Helper()
	bin := testenv.Tool(t, "cpio", "cpio")
	dir := t.TempDir()
	cmd := exec.Command(bin, "-idmu", "--quiet", "--no-absolute-filenames")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(archive)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v: %s", err, out)
	}
	return dir
}

var initramfsName = regexp.MustCompile(`^initramfs-[0-9a-f]{32}\.cpio$`)

// TestBuildInitramfs proves the appliance's initramfs as GNU cpio reads
// it: the init as /init (0755, the same bytes), every module under
// lib/modules by its base name with its content, their load order in
// etc/sealprep-appliance/modules, the mount points; and that it is kept
// in a cache directory of root's alone under a name of its content.
func TestBuildInitramfs(t *testing.T) {
	mods := t.TempDir()
	fakeModules(t, mods)
	k := Kernel{Version: "6.1.0-test", Modules: mods}
	list, err := k.ModulesFor([]string{"ext4"})
	if err != nil {
		t.Fatal(err)
	}
	init := staticInit(t, t.TempDir())
	cache := filepath.Join(t.TempDir(), "cache")
	p, err := BuildInitramfs(cache, init, k, list)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(p) != cache || !initramfsName.MatchString(filepath.Base(p)) {
		t.Errorf("initramfs at %s", p)
	}
	if st, err := os.Stat(cache); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("cache directory: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Errorf("initramfs file mode %v, %v", st.Mode(), err)
	}
	archive, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := cpioExtract(t, archive)

	b, err := os.ReadFile(filepath.Join(dir, "init"))
	st, _ := os.Stat(filepath.Join(dir, "init"))
	if err != nil || !bytes.Equal(b, tinyELF("")) || st.Mode().Perm() != 0o755 {
		t.Errorf("/init: %v, %d bytes, mode %v", err, len(b), st.Mode())
	}
	var names []string
	for _, m := range list {
		name := filepath.Base(m)
		names = append(names, name)
		got, err := os.ReadFile(filepath.Join(dir, ModuleDir, name))
		want, _ := os.ReadFile(filepath.Join(mods, m))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, %q", name, err, got)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, ModuleDir))
	if len(ents) != len(list) {
		t.Errorf("%d files in %s, want %d", len(ents), ModuleDir, len(list))
	}
	order, err := os.ReadFile(filepath.Join(dir, ModuleList))
	if want := strings.Join(names, "\n") + "\n"; err != nil || string(order) != want {
		t.Errorf("%s: %v\n%s\nwant\n%s", ModuleList, err, order, want)
	}
	if !strings.HasPrefix(string(order), "virtio.ko\nvirtio_ring.ko\n") || !strings.HasSuffix(string(order), "crc32c_generic.ko.xz\ncrc16.ko\njbd2.ko\nmbcache.ko\next4.ko\n") {
		t.Errorf("load order:\n%s", order)
	}
	for _, d := range []string{"dev", "proc", "sys", "run", "tmp", "etc/sealprep-appliance", "lib/modules"} {
		if st, err := os.Stat(filepath.Join(dir, d)); err != nil || !st.IsDir() {
			t.Errorf("%s: not a directory (%v)", d, err)
		}
	}
}

// TestBuildInitramfsCache proves the content cache: the same inputs give
// the same file, reused rather than written again; a changed module or
// init gives another name; and no temporary file is left behind.
func TestBuildInitramfsCache(t *testing.T) {
	mods := t.TempDir()
	fakeModules(t, mods)
	k := Kernel{Version: "6.1.0-test", Modules: mods}
	list, err := k.ModulesFor(nil)
	if err != nil {
		t.Fatal(err)
	}
	init := staticInit(t, t.TempDir())
	cache := t.TempDir()
	p1, err := BuildInitramfs(cache, init, k, list)
	if err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(p1)
	p2, err := BuildInitramfs(cache, init, k, list)
	st2, _ := os.Stat(p2)
	if err != nil || p2 != p1 || !os.SameFile(st1, st2) {
		t.Errorf("the same inputs: %s then %s (%v); the same file: %v", p1, p2, err, os.SameFile(st1, st2))
	}

	writeFile(t, filepath.Join(mods, "kernel/drivers/block/loop.ko"), []byte("a rebuilt loop.ko\n"), 0o644)
	p3, err := BuildInitramfs(cache, init, k, list)
	if err != nil || p3 == p1 {
		t.Errorf("a changed module: %s, %v; was %s", p3, err, p1)
	}
	init2 := filepath.Join(t.TempDir(), "sealprep")
	writeFile(t, init2, append(tinyELF(""), 0), 0o755)
	p4, err := BuildInitramfs(cache, init2, k, list)
	if err != nil || p4 == p3 || p4 == p1 {
		t.Errorf("a changed init: %s, %v", p4, err)
	}
	// Fewer modules, another archive.
	p5, err := BuildInitramfs(cache, init2, k, list[:len(list)-1])
	if err != nil || p5 == p4 {
		t.Errorf("fewer modules: %s, %v", p5, err)
	}
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if !initramfsName.MatchString(e.Name()) {
			t.Errorf("left in the cache: %s", e.Name())
		}
	}
	if len(ents) != 4 {
		t.Errorf("%d files in the cache, want 4", len(ents))
	}
	// A cached file of the wrong size (cut short) is written again.
	if err := os.Truncate(p1, 10); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mods, "kernel/drivers/block/loop.ko"), []byte("fake module kernel/drivers/block/loop.ko\n"), 0o644)
	if p, err := BuildInitramfs(cache, init, k, list); err != nil || p != p1 {
		t.Fatalf("rebuilt: %s, %v", p, err)
	}
	if st, _ := os.Stat(p1); st.Size() == 10 {
		t.Error("a cut-short cached initramfs was reused")
	}
}

// TestBuildInitramfsRefuses proves what BuildInitramfs refuses, before
// writing anything: an init that is dynamically linked (a handmade ELF
// with PT_INTERP, and the host's /bin/true when it is one), one that is
// not ELF, a missing init, and a module file that is missing.
func TestBuildInitramfsRefuses(t *testing.T) {
	mods := t.TempDir()
	fakeModules(t, mods)
	k := Kernel{Version: "6.1.0-test", Modules: mods}
	list, err := k.ModulesFor(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dyn := filepath.Join(dir, "dynamic")
	writeFile(t, dyn, tinyELF("/lib64/ld-linux-x86-64.so.2"), 0o755)
	script := filepath.Join(dir, "script")
	writeFile(t, script, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	cases := []struct{ name, init, want string }{
		{"dynamic", dyn, "dynamically linked; build sealprep with CGO_ENABLED=0"},
		{"script", script, "the appliance's init " + script + " is not an executable"},
		{"missing", filepath.Join(dir, "absent"), "is not an executable"},
	}
	if f, err := elf.Open("/bin/true"); err == nil {
		for _, ph := range f.Progs {
			if ph.Type == elf.PT_INTERP {
				cases = append(cases, struct{ name, init, want string }{"/bin/true", "/bin/true", "/bin/true is dynamically linked"})
			}
		}
		f.Close()
	}
	cache := filepath.Join(t.TempDir(), "cache")
	for _, tc := range cases {
		_, err := BuildInitramfs(cache, tc.init, k, list)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	init := staticInit(t, dir)
	_, err = BuildInitramfs(cache, init, k, append(list, "kernel/fs/absent.ko"))
	if err == nil || !strings.Contains(err.Error(), "kernel 6.1.0-test: ") || !strings.Contains(err.Error(), "absent.ko") {
		t.Errorf("a missing module file: %v", err)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("the cache was written on a refusal: %v", err)
	}
}

// TestJobArchive proves the run's job archive: one file,
// etc/sealprep-appliance/job.json, mode 0600, holding the job, in an
// archive GNU cpio reads, padded to 4 bytes as the kernel needs of an
// archive laid after another. (GNU cpio stops at the first trailer, so
// it reads the job archive on its own.)
func TestJobArchive(t *testing.T) {
	job := []byte(`{"cmd":"apply","ops":["machine-id"]}`)
	a, err := JobArchive(job)
	if err != nil {
		t.Fatal(err)
	}
	if len(a)%4 != 0 || !bytes.HasPrefix(a, []byte("070701")) {
		t.Errorf("an archive of %d bytes starting %q", len(a), a[:6])
	}
	dir := cpioExtract(t, a)
	p := filepath.Join(dir, JobFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || !bytes.Equal(b, job) || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %q, mode %v", JobFile, err, b, st.Mode())
	}
}
