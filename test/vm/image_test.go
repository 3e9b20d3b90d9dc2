//go:build vmtest

package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The Debian 12 root filesystem: what mmdebstrap installs. locales is there
// because cloud-init's locale module runs update-locale for en_US.UTF-8 and
// reports an error without it; dbus because guestcheck reads unit state
// over the system bus; net-tools because cloud-init renders a route's
// metric for ifupdown as `route add ... metric N` (see networkConfig);
// systemd-timesyncd because minbase leaves out systemd's Recommends and the
// time-sync check fails a guest with no time daemon (time-sync-no-daemon).
var (
	suite    = suiteFromEnv()
	packages = []string{
		"linux-image-cloud-amd64", "systemd-sysv", "udev", "dbus", "cloud-init", "qemu-guest-agent",
		"openssh-server", "iproute2", "isc-dhcp-client", "ifupdown", "netbase", "e2fsprogs", "sudo",
		"procps", "locales", "net-tools", "systemd-timesyncd",
	}
)

// suiteFromEnv is $GUESTCHECK_VM_SUITE (a Debian suite such as trixie)
// or bookworm, the suite the scenarios are written for.
func suiteFromEnv() string {
	if s := os.Getenv("GUESTCHECK_VM_SUITE"); s != "" {
		return s
	}
	return "bookworm"
}

// customize turns the extracted tree into the test image: a neutral
// hostname as in Debian's cloud images, a root by label, en_US.UTF-8
// generated, and the guestcheck package, installed, purged and installed
// again with no systemd running, which is what an image build does, with a
// boot budget for emulated guests in its configuration.
// Its text is part of the image's cache key.
const customize = `set -eu
t=$1 deb=$2
echo localhost >"$t/etc/hostname"
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$t/etc/hosts"
# Not the build host's resolver: the VM tests' user network serves DNS on
# 192.0.2.3 (ifupdown applies dns-nameservers only with resolvconf).
printf 'nameserver 192.0.2.3\n' >"$t/etc/resolv.conf"
printf 'LABEL=rootfs\t/\text4\trw,errors=remount-ro\t0\t1\n' >"$t/etc/fstab"
# The guests have no network (restrict=on): apt's one source is an empty
# local repository, so that cloud-init's package_update succeeds at once and
# a package that is not installed fails to install at once. With the
# mirrors mmdebstrap left, apt-get update spent four minutes per guest
# failing to resolve the archive's host (three sources, four tries, 20 s each).
r=/var/lib/guestcheck-vm-repo
mkdir -p "$t$r"
: >"$t$r/Packages"
printf 'Date: Thu, 01 Jan 2026 00:00:00 UTC\nSHA256:\n %s 0 Packages\n' "$(sha256sum <"$t$r/Packages" | cut -d' ' -f1)" >"$t$r/Release"
printf 'deb [trusted=yes] file:%s ./\n' "$r" >"$t/etc/apt/sources.list"
rm -f "$t"/etc/apt/sources.list.d/*.list "$t"/etc/apt/sources.list.d/*.sources
chroot "$t" apt-get -qq update
sed -i 's/^# *en_US.UTF-8 UTF-8/en_US.UTF-8 UTF-8/' "$t/etc/locale.gen"
chroot "$t" locale-gen >/dev/null
# As update-locale would: with LANG set to its default locale already,
# cloud-init's locale module does not run locale-gen again at first boot
# (half a minute of the critical path under TCG).
printf 'LANG=en_US.UTF-8\n' >"$t/etc/default/locale"
cp "$deb" "$t/tmp/guestcheck.deb"
chroot "$t" dpkg -i /tmp/guestcheck.deb
wants=$t/etc/systemd/system/multi-user.target.wants/guestcheck.service
[ -L "$wants" ] || { echo "postinst did not enable guestcheck.service in a chroot" >&2; exit 1; }
chroot "$t" dpkg -P guestcheck
for f in /usr/bin/guestcheck /usr/sbin/sealprep /etc/guestcheck/guestcheck.yaml /usr/lib/systemd/system/guestcheck.service; do
	[ ! -e "$t$f" ] || { echo "dpkg -P left $f" >&2; exit 1; }
done
[ ! -L "$wants" ] || { echo "dpkg -P left the enablement symlink" >&2; exit 1; }
chroot "$t" dpkg -i /tmp/guestcheck.deb
rm "$t/tmp/guestcheck.deb"
# Guests run under TCG, where the kernel alone takes half a minute and
# cloud-final ends two to three minutes after it when two guests share two
# cores: the systemd check's 60 s default boot budget would warn on every
# guest. And a D-Bus round trip there takes tens of milliseconds on a
# loaded host, so reading every loaded unit's After= (a Get per unit, a few
# hundred) can take longer than the 5 s default check deadline. With
# other jobs on the host the other checks miss 5 s too (cloud-config,
# cloud-init, ssh, time-sync and qemu-guest-agent ended in check-timeout
# in every Debian 12 intent guest at load average 8 to 14): every check
# gets 30 s. An image builder for emulated guests would set the same.
printf '\n# Set by the VM tests: TCG guests are slow.\nsystemd:\n  boot_budget: 180s\ncheck_timeout: 30s\nchecks:\n  systemd: {timeout: 30s}\n' >>"$t/etc/guestcheck/guestcheck.yaml"
chroot "$t" dpkg-query -W -f='${Package} ${Version} ${Status}\n' guestcheck
`

// image is a bootable raw disk image with its kernel and initrd for direct
// kernel boot.
type image struct {
	Root, Kernel, Initrd string
}

// cacheKey hashes the inputs of a build step.
func cacheKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// run runs a host command, returning its combined output in the error.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(string(out), 30))
	}
	return out, nil
}

// buildRootfs runs mmdebstrap unless a tarball for the same arguments is
// cached. It returns the tarball and its key.
func buildRootfs(ctx context.Context, t *testing.T, cache string) (string, string) {
	mirrors := debianSources(t, suite)
	args := append([]string{"--variant=minbase", "--include=" + strings.Join(packages, ","), suite}, mirrors...)
	key := cacheKey(args...)
	tarball := filepath.Join(cache, "rootfs-"+key+".tar")
	if st, err := os.Stat(tarball); err == nil && st.Size() > 0 {
		t.Logf("image: cached root filesystem %s", tarball)
		return tarball, key
	}
	start := time.Now()
	t.Logf("image: mmdebstrap %s (a few minutes)", suite)
	tmp := filepath.Join(cache, "rootfs-"+key+".tmp.tar") // mmdebstrap picks the format by extension
	full := append(append([]string{}, args[:3]...), tmp)
	full = append(full, mirrors...)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	defer cancel()
	if _, err := run(ctx, "mmdebstrap", full...); err != nil {
		os.Remove(tmp)
		t.Fatalf("image: %v", err)
	}
	if err := os.Rename(tmp, tarball); err != nil {
		t.Fatal(err)
	}
	t.Logf("image: root filesystem built in %s", time.Since(start).Round(time.Second))
	return tarball, key
}

// buildImage returns the test image for deb, building it unless one for the
// same root filesystem, package and recipe is cached. Older images are
// removed: the cache keeps one.
func buildImage(ctx context.Context, t *testing.T, cache, deb string) image {
	t.Helper()
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	tarball, rootKey := buildRootfs(ctx, t, cache)
	debSum, err := fileSHA256(deb)
	if err != nil {
		t.Fatal(err)
	}
	key := cacheKey(rootKey, debSum, customize, "size=3G label=rootfs")
	dir := filepath.Join(cache, "image-"+key)
	img := image{Root: filepath.Join(dir, "root.img"), Kernel: filepath.Join(dir, "vmlinuz"), Initrd: filepath.Join(dir, "initrd.img")}
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		t.Logf("image: cached %s (package %s)", dir, filepath.Base(deb))
		return img
	}
	start := time.Now()
	t.Logf("image: building %s from %s", dir, filepath.Base(deb))
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	steps := [][]string{
		{"tar", "-C", tree, "--numeric-owner", "-xpf", tarball},
		{"sh", "-c", customize, "customize", tree, deb},
	}
	for _, s := range steps {
		out, err := run(ctx, s[0], s[1:]...)
		if err != nil {
			t.Fatalf("image: %v", err)
		}
		if s[0] == "sh" {
			t.Logf("image: %s", strings.TrimSpace(tail(string(out), 1)))
		}
	}
	for _, c := range []struct{ glob, dst string }{{"vmlinuz-*", "vmlinuz"}, {"initrd.img-*", "initrd.img"}} {
		m, _ := filepath.Glob(filepath.Join(tree, "boot", c.glob))
		if len(m) == 0 {
			t.Fatalf("image: no /boot/%s in the tree", c.glob)
		}
		sort.Strings(m)
		if _, err := run(ctx, "cp", m[len(m)-1], filepath.Join(tmp, c.dst)); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(tmp, "root.img")
	for _, s := range [][]string{{"truncate", "-s", "3G", root}, {"mkfs.ext4", "-q", "-F", "-L", "rootfs", "-d", tree, root}} {
		if _, err := run(ctx, s[0], s[1:]...); err != nil {
			t.Fatalf("image: %v", err)
		}
	}
	os.RemoveAll(tree)
	if err := os.WriteFile(filepath.Join(tmp, "done"), []byte(filepath.Base(deb)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(cache, "image-*"))
	for _, o := range old {
		if o != dir && !strings.HasSuffix(o, ".tmp") {
			os.RemoveAll(o)
		}
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("image: built in %s", time.Since(start).Round(time.Second))
	return img
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
