package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/image/imagetest"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// hfsBound is how long one sealprep run of the hostile filesystem corpus
// may take, the appliance's boot under TCG included: a run still going
// then is a hang. A run takes 5 to 30 s here; a loaded 2-core host (VM
// guests under TCG beside it) has stretched one past 120 s.
const hfsBound = 5 * time.Minute

// hfsWant is what one run of a hostile filesystem case must give: its
// exit code, and what its output (stdout and stderr) holds. With errLine
// set the run ends in one error line on stderr and nothing on stdout.
type hfsWant struct {
	code    int
	errLine bool
	has     []string
}

// hfsCase is one image of the hostile filesystem corpus and what plan and
// apply --yes through the appliance do with it, as observed.
type hfsCase struct {
	name        string
	parts       []imagetest.FSPart
	plan, apply hfsWant
	// fsck, if set, is the partition (1-based) that must be clean by
	// e2fsck -fn after apply: SEALED is only right on a sound filesystem.
	fsck int
}

// hfsESPSerial is the vfat serial of the corpus's ESP, UUID=ABCD-1234 in
// the root's fstab.
const hfsESPSerial = "ABCD1234"

// hfsESPTrees are a root whose fstab names the ESP by UUID= on /boot/efi,
// and the ESP's boot loader files, each longer than one 512-byte cluster,
// which sealprep reads (the loader entry) and removes (the random seed).
func hfsESPTrees(t *testing.T) (root, esp string) {
	root = identityTree(t)
	testenv.WriteFiles(t, root, map[string]string{
		"etc/fstab": "UUID=ABCD-1234 /boot/efi vfat umask=0077 0 1\n",
		"boot/efi/": "",
	})
	entry := "title Debian\noptions root=/dev/vda2 ro systemd.machine_id=23088bf0c2b64a7e9c8d3f1a2b4c5d6e\n" + strings.Repeat("# padding\n", 200)
	esp = imagetest.Tree(t, map[string]string{
		"loader/entries/debian.conf": entry,
		"loader/random-seed":         strings.Repeat("s", 2048),
		"EFI/BOOT/":                  "",
	})
	return root, esp
}

// hfsCorpus is the hostile filesystem corpus: GPT images whose root
// partition is marked as the root by its type, so that the appliance
// mounts it at once, made by the real mkfs tools and broken at known
// offsets (imagetest.FSPart.Corrupt) with the superblock magic and
// checksums kept, so that the host's Go probe still sees the filesystem
// and the appliance's kernel is the one to meet the damage.
func hfsCorpus(t *testing.T) []hfsCase {
	root := func(fs string, size int, corrupt func(testing.TB, string)) []imagetest.FSPart {
		return []imagetest.FSPart{{Type: imagetest.TypeRootAMD64, FS: fs, SizeMiB: size, Tree: identityTree(t), Corrupt: corrupt}}
	}
	mountFailed := func(fs, errno, kernel string) hfsWant {
		return hfsWant{code: seal.ExitProblem, errLine: true, has: []string{
			"the appliance could not seal the image: mount partition 1 (" + fs + ") on /: " + errno, kernel}}
	}
	planned := func(notes ...string) hfsWant {
		return hfsWant{code: seal.ExitOK, has: append([]string{"sealprep: PLANNED: ", "unmounted and detached"}, notes...)}
	}
	noReplay := func(fs, opt string) string {
		return "note: partition 1 (" + fs + ") on / needs its journal replayed (it was not cleanly unmounted), which plan and verify do not do: mounted with " + opt
	}
	espRoot, espTree := hfsESPTrees(t)
	return []hfsCase{{
		// s_inodes_count and s_log_block_size garbage, the checksum
		// stored again.
		name: "ext4 superblock garbage",
		parts: root("ext4", 32, imagetest.ExtSuperblock(func(sb []byte) {
			copy(sb[0x00:], []byte{0xef, 0xbe, 0xad, 0xde})
			copy(sb[0x18:], []byte{0x0d, 0xf0, 0xad, 0x0b})
		})),
		plan:  mountFailed("ext4", "invalid argument", "Invalid log block size: 195948557"),
		apply: mountFailed("ext4", "invalid argument", "Invalid log block size: 195948557"),
	}, {
		// needs_recovery with a sound, empty journal: what a crash after
		// a commit leaves. Plan reads it without the replay and says so;
		// apply replays it and seals a filesystem e2fsck finds clean.
		name:  "ext4 needs recovery",
		parts: root("ext4", 32, imagetest.ExtNeedsRecovery(false)),
		plan:  planned(noReplay("ext4", "noload")),
		apply: hfsWant{code: seal.ExitOK, has: []string{"sealprep: SEALED: ", "unmounted and detached"}},
		fsck:  1,
	}, {
		// needs_recovery and a journal superblock of garbage behind its
		// magic: plan reads without the replay and says so, apply cannot
		// load the journal.
		name:  "ext4 needs recovery, journal superblock garbage",
		parts: root("ext4", 32, imagetest.ExtNeedsRecovery(true)),
		plan:  planned(noReplay("ext4", "noload")),
		apply: mountFailed("ext4", "invalid argument", "error loading journal"),
	}, {
		// An internal log of random bytes (mkfs.xfs's smallest
		// filesystem is 300 MiB; the image is sparse).
		name:  "xfs log garbage",
		parts: root("xfs", 300, imagetest.XFSGarbageLog),
		plan:  planned(noReplay("xfs", "norecovery")),
		apply: mountFailed("xfs", "structure needs cleaning", "; its console ended with: "),
	}, {
		// The superblock's root tree pointer 1 MiB off, its crc32c
		// stored again.
		name:  "btrfs tree root off",
		parts: root("btrfs", 128, imagetest.BtrfsBadRoot),
		plan:  mountFailed("btrfs", "invalid argument", "open_ctree failed"),
		apply: mountFailed("btrfs", "invalid argument", "open_ctree failed"),
	}, {
		// The ESP's loader entry and random seed each a cluster chain
		// that loops on its first cluster. Reading a file walks its chain
		// only as far as its size, so plan reads it; removing the seed
		// frees the chain, the kernel finds the loop, and the ESP goes
		// read-only (vfat's errors=remount-ro): the entry's rewrite
		// fails, and apply says FAILED.
		name: "vfat ESP cluster chain loop",
		parts: []imagetest.FSPart{
			{Type: imagetest.TypeESP, FS: "vfat", SizeMiB: 16, UUID: hfsESPSerial, Tree: espTree,
				Corrupt: imagetest.FATLoop("/loader/entries/debian.conf", "/loader/random-seed")},
			{Type: imagetest.TypeRootAMD64, FS: "ext4", SizeMiB: 32, Tree: espRoot},
		},
		plan: planned("/boot/efi: partition 1 (vfat, UUID=ABCD-1234), line 1 of the image's /etc/fstab names it as UUID=ABCD-1234"),
		apply: hfsWant{code: seal.ExitProblem, has: []string{
			"random-seed: 1 done, 0 unchanged, 0 failed",
			"machine-id-cmdline: failed: rewrite /boot/efi/loader/entries/debian.conf: replace /boot/efi/loader/entries/debian.conf: read-only file system",
			"sealprep: FAILED: ", "unmounted and detached"}},
	}}
}

// The hostile filesystem corpus through the sealing appliance: for each
// image, made by the real mkfs tools and then broken at known offsets
// (ext4 superblock garbage; ext4 that needs its journal replayed, with a
// sound and with a garbage journal; an XFS log of garbage; a btrfs tree
// root pointer off; an ESP whose files' FAT cluster chains loop), plan
// and apply --yes --image end within hfsBound with the exit code and
// messages observed for it: a mount the appliance's kernel refuses is
// one error line (exit 1) naming the errno and the kernel's reason; plan
// on a filesystem it had to mount without replaying the journal says so;
// SEALED only on a filesystem e2fsck finds clean. No output holds a Go
// panic, a goroutine dump or a kernel oops, plan changes no byte of the
// image, and the host is as before: no mount, no loop device on the
// image, no session directory, no process holding the image open.
func TestHostileFilesystemsInAppliance(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	bin := sealprepBinary(t)
	before := hfsMounts(t)
	for _, c := range hfsCorpus(t) {
		t.Run(strings.NewReplacer(" ", "_", ",", "").Replace(c.name), func(t *testing.T) {
			// Two appliances at a time (go test -parallel is GOMAXPROCS):
			// each case has its own image, state directory and checks.
			t.Parallel()
			dir := t.TempDir()
			state := filepath.Join(dir, "state")
			img := imagetest.BuildFS(t, dir, "disk", c.parts)
			hash := imagetest.Hash(t, img)
			out, stderr, code := hfsRun(t, "plan", bin, state, "plan", "--image", img)
			hfsCheck(t, "plan", c.plan, out, stderr, code)
			if imagetest.Hash(t, img) != hash {
				t.Error("plan changed the image")
			}
			hfsHostUnchanged(t, before, dir, state, img)
			out, stderr, code = hfsRun(t, "apply", bin, state, "apply", "--yes", "--image", img)
			hfsCheck(t, "apply", c.apply, out, stderr, code)
			hfsHostUnchanged(t, before, dir, state, img)
			if c.fsck > 0 && code == seal.ExitOK {
				hfsFsck(t, img, c.parts, c.fsck)
			}
		})
	}
}

// hfsRun runs bin under hfsBound; a run that has not ended by then is
// killed and fails the test as a hang.
func hfsRun(t *testing.T, name, bin, state string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hfsBound)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = append(os.Environ(), "SEALPREP_STATE_DIR="+state)
	c.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after %s: killed\n%s%s", name, hfsBound, out.String(), errb.String())
	}
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: exit %d in %.1f s: %s", name, code, time.Since(start).Seconds(), hfsLastLine(out.String()+errb.String()))
	return out.String(), errb.String(), code
}

func hfsLastLine(s string) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return l[len(l)-1]
}

// hfsNotOneLine are what a Go panic, a goroutine dump or a kernel oops
// put in an output; none may reach the user.
var hfsNotOneLine = regexp.MustCompile(`panic:|goroutine \d|runtime\.|Call Trace|Oops|BUG:|RIP:|Kernel panic|end trace`)

// hfsStderrLine is the shape of every line on stderr: sealprep's own
// errors, or apply's progress, "operation: ...".
var hfsStderrLine = regexp.MustCompile(`^(sealprep|[a-z][a-z0-9-]*): \S`)

// hfsCheck holds one run to want, and every line of its output to being
// a message of one line.
func hfsCheck(t *testing.T, cmd string, want hfsWant, out, stderr string, code int) {
	t.Helper()
	all := out + stderr
	if code != want.code {
		t.Errorf("%s: exit %d, want %d\n%s%s", cmd, code, want.code, out, stderr)
	}
	for _, w := range want.has {
		if !strings.Contains(all, w) {
			t.Errorf("%s: the output does not hold %q:\n%s%s", cmd, w, out, stderr)
		}
	}
	if m := hfsNotOneLine.FindString(all); m != "" {
		t.Errorf("%s: the output holds %q, a panic or an oops:\n%s%s", cmd, m, out, stderr)
	}
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if l != "" && !hfsStderrLine.MatchString(l) {
			t.Errorf("%s: a stderr line that is not a message of its own: %q", cmd, l)
		}
	}
	if want.errLine {
		if out != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "sealprep: --image ") {
			t.Errorf("%s: want one error line on stderr and nothing on stdout, got:\n%s%s", cmd, out, stderr)
		}
	} else if !strings.HasPrefix(hfsLastLine(out), "sealprep: ") {
		t.Errorf("%s: the report does not end with its verdict:\n%s", cmd, out)
	}
}

// hfsMounts is the test process's mount table, one line a mount without
// its mount ID and parent ID (fields 1 and 2).
func hfsMounts(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(l); len(f) > 4 {
			m[strings.Join(f[2:], " ")] = true
		}
	}
	return m
}

// hfsHostUnchanged fails the test for anything a run left on the host:
// a mount under dir or of a loop device on a file under dir, a loop
// device backed by the image or a file under dir (sysfs, as losetup -j
// reads it), anything imagetest.Leftovers finds (session directories
// under state included), and a process holding the image open (QEMU). A
// new mount of nothing of this test's (another package's test running
// at the same time) is only logged.
func hfsHostUnchanged(t *testing.T, before map[string]bool, dir, state, img string) {
	t.Helper()
	loops := map[string]string{}
	ents, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, e := range ents {
		b, _ := os.ReadFile(e)
		bf := strings.TrimSpace(string(b))
		dev := "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(e)))
		loops[dev] = bf
		if bf == img || strings.HasPrefix(bf, dir+"/") {
			t.Errorf("loop device %s is attached to %s", dev, bf)
		}
	}
	var added []string
	for m := range hfsMounts(t) {
		if !before[m] {
			added = append(added, m)
		}
	}
	sort.Strings(added)
	for _, m := range added {
		f := strings.Fields(m)
		src := ""
		if i := strings.Index(m, " - "); i >= 0 {
			if g := strings.Fields(m[i+3:]); len(g) > 1 {
				src = g[1]
			}
		}
		if strings.HasPrefix(f[2], dir+"/") || strings.HasPrefix(loops[src], dir+"/") || src == img {
			t.Errorf("a new mount on the host: %s", m)
		} else {
			t.Logf("a new mount of nothing of this test's (another test's?): %s", m)
		}
	}
	if left := imagetest.Leftovers(state, img); len(left) > 0 {
		t.Errorf("left behind: %s", strings.Join(left, "; "))
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && l == img {
			pid := strings.Split(fd, "/")[2]
			cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			t.Errorf("process %s holds the image open: %s", pid, strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}

// hfsFsck copies partition n (1-based) of a BuildFS image out and checks
// it with e2fsck -fn: clean, or the test fails.
func hfsFsck(t *testing.T, img string, parts []imagetest.FSPart, n int) {
	t.Helper()
	fsck := testenv.Tool(t, "e2fsck", "e2fsprogs")
	off := int64(1 << 20)
	for _, p := range parts[:n-1] {
		off += int64(p.SizeMiB) << 20
	}
	in, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	part := filepath.Join(t.TempDir(), "part")
	f, err := os.Create(part)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, io.NewSectionReader(in, off, int64(parts[n-1].SizeMiB)<<20)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, err := exec.Command(fsck, "-fn", part).CombinedOutput(); err != nil {
		t.Errorf("e2fsck -fn of partition %d after SEALED: %v\n%s", n, err, b)
	}
}

// hfsForbidden matches a strace line of a mount(2), fsopen(2),
// fsmount(2) or move_mount(2) call, or of a loop device ioctl that
// allocates, attaches, configures or detaches (by name, or by number
// where strace does not name it; the LOOP_GET_STATUS queries aside),
// finished or not.
var hfsForbidden = regexp.MustCompile(`^\d+\s+(<\.\.\. )?(mount|fsopen|fsmount|move_mount)[( ]|^\d+\s+(<\.\.\. )?ioctl.*(LOOP_(CONFIGURE|SET_FD|SET_STATUS|SET_STATUS64|CTL_GET_FREE|CTL_ADD|CTL_REMOVE|CHANGE_FD|CLR_FD|SET_CAPACITY|SET_DIRECT_IO|SET_BLOCK_SIZE)\b|\b0x4c0[0-246-9a]\b|\b0x4c8[0-2]\b)`)

// hfsTrace runs bin under strace -f (QEMU and every other child
// followed, whatever user it drops to) tracing mount(2), fsopen(2),
// fsmount(2), move_mount(2), ioctl(2) and execve(2), and returns the log
// and the exit code.
func hfsTrace(t *testing.T, strace, bin, state string, args ...string) ([]string, int) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	sargs := append([]string{"-f", "-qq", "--seccomp-bpf", "-e", "signal=none",
		"-e", "trace=mount,fsopen,fsmount,move_mount,ioctl,execve", "-o", log, bin}, args...)
	out, stderr, code := hfsRun(t, "strace "+strings.Join(args, " "), strace, state, sargs...)
	if hfsNotOneLine.MatchString(out + stderr) {
		t.Errorf("%s: a panic or an oops in the output:\n%s%s", args[0], out, stderr)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if code != seal.ExitOK {
		t.Logf("%s under strace: exit %d\n%s%s", args[0], code, out, stderr)
	}
	return lines, code
}

// hfsTraced says which forbidden calls a log holds, and whether QEMU's
// start and an ioctl of QEMU's are in it (the trace followed QEMU).
func hfsTraced(lines []string) (forbidden []string, qemuSeen bool) {
	qemu := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		if strings.HasPrefix(f[1], `execve("`) && strings.Contains(f[1], "qemu-system-") {
			qemu[f[0]] = true
		}
		if qemu[f[0]] && strings.HasPrefix(f[1], "ioctl(") {
			qemuSeen = true
		}
		if hfsForbidden.MatchString(l) {
			forbidden = append(forbidden, l)
		}
	}
	return forbidden, qemuSeen
}

// The tracing proof that the appliance keeps the image's filesystems
// off the host's kernel: under strace -f, apply --yes --image of a good
// image and plan --image of a hostile one (a journal to replay that the
// appliance's kernel mounts without it) make no mount(2), fsopen(2),
// fsmount(2) or move_mount(2) call and no loop device ioctl
// (LOOP_CTL_GET_FREE, LOOP_CONFIGURE, LOOP_SET_FD, LOOP_SET_STATUS64...),
// in sealprep or any child, QEMU included, whose start and ioctls the
// same trace shows. And the same trace of apply --trust-image-filesystems
// does show mount(2), LOOP_CTL_GET_FREE and LOOP_CONFIGURE: the trace
// sees what it looks for.
func TestApplianceTraceNoHostMounts(t *testing.T) {
	requireImage(t)
	requireAppliance(t)
	strace := testenv.Tool(t, "strace", "strace")
	bin := sealprepBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	before := hfsMounts(t)
	good := imagetest.Build(t, dir, "good", []imagetest.Part{{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)}}, false)
	hostile := imagetest.BuildFS(t, dir, "hostile", []imagetest.FSPart{{Type: imagetest.TypeRootAMD64, FS: "ext4", SizeMiB: 32,
		Tree: identityTree(t), Corrupt: imagetest.ExtNeedsRecovery(true)}})
	trusted := imagetest.Build(t, dir, "trusted", []imagetest.Part{{Type: imagetest.TypeLinux, FS: "ext4", SizeMiB: 32, Tree: identityTree(t)}}, false)

	for _, run := range [][]string{
		{"apply", "--yes", "--image", good},
		{"plan", "--image", hostile},
	} {
		lines, code := hfsTrace(t, strace, bin, state, run...)
		if code != seal.ExitOK {
			t.Fatalf("%s: exit %d", strings.Join(run, " "), code)
		}
		forbidden, qemuSeen := hfsTraced(lines)
		for _, l := range forbidden {
			t.Errorf("%s through the appliance: on the host: %s", run[0], l)
		}
		if !qemuSeen {
			t.Errorf("%s: the trace holds no ioctl of QEMU's: strace did not follow it (%d lines)", run[0], len(lines))
		}
		hfsHostUnchanged(t, before, dir, state, run[len(run)-1])
	}

	lines, code := hfsTrace(t, strace, bin, state, "apply", "--yes", "--trust-image-filesystems", "--image", trusted)
	if code != seal.ExitOK {
		t.Fatalf("apply --trust-image-filesystems: exit %d", code)
	}
	forbidden, _ := hfsTraced(lines)
	seen := strings.Join(forbidden, "\n")
	for _, w := range []string{" mount(", "LOOP_CTL_GET_FREE", "LOOP_CONFIGURE"} {
		if !strings.Contains(seen, w) {
			t.Errorf("apply --trust-image-filesystems: the trace shows no %s: it cannot see what it looks for\n%s", w, strings.Join(lines, "\n"))
		}
	}
	hfsHostUnchanged(t, before, dir, state, trusted)
	t.Logf("--trust-image-filesystems: %d of the %d traced calls are mounts and loop ioctls", len(forbidden), len(lines))
}
