package blocktest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

// RequireRoot skips tests that attach loop devices or mount.
func RequireRoot(t testing.TB) {
	t.Helper()
	testenv.RequireRoot(t, "needs root for loop devices")
}

// Packages lists the Debian packages providing the tools these tests run.
const Packages = "e2fsprogs xfsprogs btrfs-progs dosfstools util-linux mount fdisk"

// Tool finds a system tool in PATH or the sbin directories, which an
// unprivileged user's PATH often lacks.
func Tool(name string) (string, bool) { return testenv.Look(name) }

// RequireTools fails as root, and skips otherwise, when a tool the disk
// tests need is missing (scripts/test-deps.sh installs them).
func RequireTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		testenv.Tool(t, tool, Packages)
	}
}

// Run runs a command and returns its standard output, failing the test
// with the command's output on error.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	return RunInput(t, "", name, args...)
}

// RunInput is Run with stdin.
func RunInput(t testing.TB, stdin, name string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if p, ok := Tool(name); ok {
		name = p
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// RandomUUID returns a random version-4 UUID. Tests pick fresh UUIDs and
// labels so that runs in parallel packages (or by other users of the
// machine) never collide with each other's loop devices.
func RandomUUID(t testing.TB) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0F | 0x40
	b[8] = b[8]&0x3F | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// RandomLabel returns prefix plus 4 random hex digits.
func RandomLabel(t testing.TB, prefix string) string {
	return prefix + strings.ReplaceAll(RandomUUID(t)[:4], "-", "")
}

// Sparse creates a sparse file of size bytes in dir.
func Sparse(t testing.TB, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

// Mkfs formats target (an image file or a device) with filesystem typ
// ("ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "vfat16", "swap") and the
// given UUID and label. For vfat the UUID is the serial "ABCD-1234".
// sizeArg, when not empty, limits the filesystem (mkfs.ext4's fs-size
// argument, e.g. "32M") so that it is smaller than its device.
func Mkfs(t testing.TB, typ, target, uuid, label, sizeArg string) {
	t.Helper()
	var args []string
	tool := "mkfs." + typ
	switch typ {
	case "ext2", "ext3", "ext4":
		args = []string{"-q", "-F", "-U", uuid, "-L", label, target}
		if sizeArg != "" {
			args = append(args, sizeArg)
		}
	case "xfs":
		args = []string{"-q", "-f", "-m", "uuid=" + uuid, "-L", label, target}
	case "btrfs":
		args = []string{"-q", "-f", "-U", uuid, "-L", label, target}
	case "vfat", "vfat16":
		bits := "32"
		if typ == "vfat16" {
			bits, tool = "16", "mkfs.vfat"
		}
		args = []string{"-F", bits, "-i", strings.ReplaceAll(uuid, "-", ""), "-n", label, target}
	case "swap":
		tool = "mkswap"
		args = []string{"-U", uuid, "-L", label, target}
	default:
		t.Fatalf("Mkfs: unknown type %q", typ)
	}
	Run(t, tool, args...)
}

// AttachLoop attaches file to a free loop device (extra losetup arguments
// such as "-P" or "--offset" go before it) and detaches it when the test
// ends, whatever the outcome.
func AttachLoop(t testing.TB, file string, extra ...string) string {
	t.Helper()
	args := append(append([]string{"--find", "--show"}, extra...), file)
	dev := strings.TrimSpace(Run(t, "losetup", args...))
	if !strings.HasPrefix(dev, "/dev/loop") {
		t.Fatalf("losetup printed %q", dev)
	}
	t.Cleanup(func() {
		// A mount cleanup registered later has run already (LIFO); retry
		// briefly in case the kernel still holds the device.
		for i := 0; i < 10; i++ {
			if err := exec.Command(tool("losetup"), "-d", dev).Run(); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("could not detach %s", dev)
	})
	return dev
}

// Mount mounts dev on a new directory under the test's temporary directory
// and unmounts it when the test ends.
func Mount(t testing.TB, dev, fstype string) string {
	t.Helper()
	dir := t.TempDir()
	Run(t, "mount", "-t", fstype, dev, dir)
	t.Cleanup(func() {
		if err := exec.Command(tool("umount"), dir).Run(); err != nil {
			// Lazy unmount as a last resort, so nothing is left behind.
			if err := exec.Command(tool("umount"), "-l", dir).Run(); err != nil {
				t.Errorf("could not unmount %s: %v", dir, err)
			}
		}
	})
	return dir
}

// Blkid returns what `blkid -c /dev/null -o export dev` reports (no cache,
// so the answer comes from the disk).
func Blkid(t testing.TB, dev string) map[string]string {
	t.Helper()
	return ParseExport(Run(t, "blkid", "-c", "/dev/null", "-o", "export", dev))
}

// ParseExport parses KEY=value lines as printed by blkid -o export
// (backslash escapes undone).
func ParseExport(s string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) {
				i++
			}
			b.WriteByte(v[i])
		}
		m[k] = b.String()
	}
	return m
}

// PartitionDevice waits briefly for the kernel to create partition n of
// loop device dev (losetup -P). It returns "" when the kernel has no
// partition-table support (some minimal VM kernels are built without it).
func PartitionDevice(dev string, n int) string {
	name := fmt.Sprintf("%sp%d", filepath.Base(dev), n)
	for i := 0; i < 20; i++ {
		if _, err := os.Stat("/sys/class/block/" + name); err == nil {
			return "/dev/" + name
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ""
}

// ParsePartx parses `partx -P` output: one line per partition of
// KEY="value" pairs.
func ParsePartx(s string) []map[string]string {
	var out []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		m := map[string]string{}
		for line != "" {
			k, rest, ok := strings.Cut(line, `="`)
			if !ok {
				break
			}
			v, after, _ := strings.Cut(rest, `"`)
			m[strings.TrimSpace(k)] = v
			line = strings.TrimSpace(after)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// tool is Tool's path, or the bare name for exec to report as missing.
func tool(name string) string {
	if p, ok := Tool(name); ok {
		return p
	}
	return name
}
