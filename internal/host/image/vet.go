package image

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/host/image/imgfmt"
)

// Limits of what sealprep takes from an image header. They are far above
// any cloud image and far below what makes qemu-img or QEMU exhaust the
// host (CVE-2015-5162: a crafted header made qemu-img info allocate
// without bound).
const (
	// MaxVirtualSize is the largest disk an image may claim: 64 TiB.
	MaxVirtualSize = 64 << 40
	// MaxL1Bytes is QEMU's own cap on a qcow2 L1 table (QCOW_MAX_L1_SIZE).
	MaxL1Bytes = 32 << 20
	// MaxSnapshots is QEMU's own cap on internal snapshots.
	MaxSnapshots = 65536
	// MaxChain bounds the backing chain, the image included.
	MaxChain = 16
)

// Policy is what the user allows beyond the defaults.
type Policy struct {
	// AllowBacking are exact absolute paths a backing file may have
	// outside the image's directory (--allow-backing PATH). A path is
	// still read without following a symlink and must be a regular file.
	AllowBacking []string
}

// Layer is one file of an image's chain, vetted and open read-only.
type Layer struct {
	// Path is the file's absolute path, for reports and for an overlay's
	// header; tools are given File instead, so a path swapped after the
	// vetting is never read.
	Path string `json:"path"`
	// Format is the format read from the file's header, and the one
	// every tool is told (-f): nothing is probed.
	Format string `json:"format"`
	// VirtualSize is the guest-visible size the header claims.
	VirtualSize int64 `json:"virtual_size"`
	// Named is the backing name as the layer above wrote it ("" for the
	// image itself).
	Named string `json:"named,omitempty"`
	// File is the open, read-only file.
	File *os.File `json:"-"`

	hdr imgfmt.Header
}

// Chain is a vetted image: the image first, then its backing files,
// nearest first.
type Chain struct {
	Layers []Layer
}

// Close closes every layer's file.
func (c *Chain) Close() {
	if c == nil {
		return
	}
	for _, l := range c.Layers {
		if l.File != nil {
			l.File.Close()
		}
	}
}

// Top is the image itself.
func (c *Chain) Top() Layer { return c.Layers[0] }

// Backing are the backing files' paths, nearest first.
func (c *Chain) Backing() []string {
	var out []string
	if c == nil {
		return nil // the appliance's session: the host holds the chain
	}
	for _, l := range c.Layers[1:] {
		out = append(out, l.Path)
	}
	return out
}

// extFormats are file name extensions that say what a file is; ".img" is
// left out on purpose (Ubuntu and others ship qcow2 files named .img).
var extFormats = map[string]string{
	".qcow2": imgfmt.QCOW2, ".qcow": imgfmt.QCOW1, ".raw": imgfmt.Raw, ".vmdk": imgfmt.VMDK,
	".vhd": imgfmt.VHD, ".vhdx": imgfmt.VHDX, ".vdi": imgfmt.VDI, ".qed": imgfmt.QED, ".iso": imgfmt.ISO,
}

// formatNames say a refused format as its users know it.
var formatNames = map[string]string{
	imgfmt.QCOW1: "qcow version 1", imgfmt.QED: "QED", imgfmt.VMDK: "VMDK", imgfmt.VHD: "VHD",
	imgfmt.VHDX: "VHDX", imgfmt.VDI: "VDI", imgfmt.LUKS: "LUKS", imgfmt.ISO: "ISO 9660",
	imgfmt.Parallels: "Parallels", imgfmt.DMG: "DMG",
}

// Vet opens file and its backing chain read-only and checks every header
// in Go before any tool opens them. A *Refusal says, in one line, what
// was found and how to make a safe copy; nothing was read past the
// headers and nothing was changed.
func Vet(file string, p Policy) (*Chain, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	f, err := openPlain(abs)
	if err != nil {
		return nil, err
	}
	c := &Chain{}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	top, h, err := vetLayer(f, abs, "", "")
	if err != nil {
		return nil, err
	}
	c.Layers = append(c.Layers, top)
	if err := vetName(abs, h); err != nil {
		return nil, err
	}
	dir := filepath.Dir(abs)
	seen := map[[2]uint64]string{}
	for {
		last := c.Layers[len(c.Layers)-1]
		if err := noLoop(seen, last); err != nil {
			return nil, err
		}
		if h.BackingFile == "" {
			break
		}
		if len(c.Layers) >= MaxChain {
			return nil, refuse("%s: its backing chain is longer than %d files; flatten a copy: %s", abs, MaxChain, convert("qcow2", abs))
		}
		next, nh, err := openBacking(last, h, dir, p)
		if err != nil {
			return nil, err
		}
		c.Layers = append(c.Layers, next)
		h = nh
	}
	ok = true
	return c, nil
}

// openPlain opens the image the user named. O_NONBLOCK keeps a FIFO from
// hanging the open; a regular file ignores it.
func openPlain(abs string) (*os.File, error) {
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: abs, Err: err}
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// vetLayer parses one open file's header and holds it to the rules every
// layer shares. named is what the layer above called it, stated the
// format it gave ("" for the image).
func vetLayer(f *os.File, path, named, stated string) (Layer, imgfmt.Header, error) {
	fail := func(err error) (Layer, imgfmt.Header, error) {
		f.Close()
		return Layer{}, imgfmt.Header{}, err
	}
	what := path
	if named != "" {
		what = "backing file " + path
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fail(refuse("%s is %s, not a regular file; an image and its backing files must be files", what, kindOf(st.Mode)))
	}
	if fsName := pseudoFS(f); fsName != "" {
		return fail(refuse("%s is on %s, not a disk image; refused", what, fsName))
	}
	h, err := imgfmt.Parse(f, st.Size)
	if err != nil {
		return fail(refuse("%s: %v; it is damaged or crafted, so nothing reads it", what, err))
	}
	if err := vetHeader(what, path, st.Size, h); err != nil {
		return fail(err)
	}
	if stated != "" && stated != h.Format {
		return fail(refuse("%s: the layer above says it is %s, but its header is %s; refused, as QEMU would read it as the wrong format", what, stated, h.Format))
	}
	return Layer{Path: path, Format: h.Format, VirtualSize: int64(h.VirtualSize), Named: named, File: f, hdr: h}, h, nil
}

// vetHeader is the policy for one header: formats sealprep takes, sizes
// it believes, features it can open safely.
func vetHeader(what, path string, size int64, h imgfmt.Header) error {
	if h.Format != imgfmt.Raw && h.Format != imgfmt.QCOW2 {
		return refuseFormat(what, path, h)
	}
	if h.Format == imgfmt.Raw {
		return nil
	}
	switch {
	case h.Encrypted:
		return refuse("%s is an encrypted qcow2; sealprep does not open encrypted images (decrypt a copy with qemu-img convert and its secret)", what)
	case h.DataFile != "" || h.ExternalData:
		df := h.DataFile
		if df == "" {
			df = "(one given at open time)"
		}
		return refuse("%s names an external data file, %s, where its blocks would be read and written; refused (once you know that file: %s)", what, df, convert("qcow2", path))
	case h.Corrupt:
		return refuse("%s is marked corrupt in its qcow2 header; check a copy with qemu-img check -r all", what)
	case h.UnknownIncompatible != 0:
		return refuse("%s uses qcow2 features this sealprep does not know (incompatible bits %#x); refused rather than guessed", what, h.UnknownIncompatible)
	case h.VirtualSize > MaxVirtualSize:
		return refuse("%s claims a virtual size of %s, more than the %s sealprep takes; refused as crafted", what, human(h.VirtualSize), human(MaxVirtualSize))
	case uint64(h.L1Size)*8 > MaxL1Bytes:
		return refuse("%s has an L1 table of %s, more than QEMU's %s; refused as crafted", what, human(uint64(h.L1Size)*8), human(MaxL1Bytes))
	case h.L1Offset+uint64(h.L1Size)*8 > uint64(size):
		return refuse("%s: its L1 table (%d entries at byte %d) runs past the end of the file; refused as damaged or crafted", what, h.L1Size, h.L1Offset)
	case h.Snapshots > MaxSnapshots:
		return refuse("%s claims %d internal snapshots, more than QEMU's %d; refused as crafted", what, h.Snapshots, MaxSnapshots)
	case h.Snapshots > 0 && h.SnapshotsOffset >= uint64(size):
		return refuse("%s: its snapshot table starts past the end of the file; refused as damaged or crafted", what)
	}
	return nil
}

// refuseFormat is the one line for a format sealprep does not take.
func refuseFormat(what, path string, h imgfmt.Header) error {
	name := formatNames[h.Format]
	if name == "" {
		name = h.Format
	}
	if h.Format == imgfmt.VMDK {
		for _, e := range h.Extents {
			if filepath.IsAbs(e) || strings.Contains(e, "..") || hasProtocol(e) {
				return refuse("%s is a VMDK whose descriptor names the extent %q outside its directory; do not convert it, as qemu-img would read that file", what, e)
			}
		}
	}
	switch h.Format {
	case imgfmt.LUKS:
		return refuse("%s is a LUKS container; sealprep does not open encrypted images", what)
	case imgfmt.ISO:
		return refuse("%s is an ISO 9660 image, not a disk; sealprep seals disk images", what)
	}
	return refuse("%s is a %s image; sealprep takes raw and qcow2 (convert a copy: %s)", what, name, convert(h.Format, path))
}

// vetName refuses an image whose name says one format and whose header
// another: a pipeline that mislabels a file is not one to trust with a
// seal, and the user should know what the file is.
func vetName(path string, h imgfmt.Header) error {
	want, ok := extFormats[strings.ToLower(filepath.Ext(path))]
	if !ok || want == h.Format {
		return nil
	}
	return refuse("%s is named %s but its header is %s; rename it, or convert a copy: %s", path, filepath.Ext(path), h.Format, convert(h.Format, path))
}

// openBacking resolves the backing name of last as QEMU would, holds it
// to the policy and opens it read-only without leaving the image's
// directory (or, for an --allow-backing path, without any symlink).
func openBacking(last Layer, h imgfmt.Header, dir string, p Policy) (Layer, imgfmt.Header, error) {
	name := h.BackingFile
	if hasProtocol(name) {
		return Layer{}, imgfmt.Header{}, refuse("%s names %q as its backing file, a QEMU protocol rather than a file; refused", last.Path, name)
	}
	if h.BackingFormat == "" {
		return Layer{}, imgfmt.Header{}, refuse("%s names the backing file %s but does not state its format, which QEMU would then guess; refused (on a copy: qemu-img rebase -u -F FORMAT -b %s)", last.Path, name, name)
	}
	target := name
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(last.Path), target)
	}
	target = filepath.Clean(target)
	allow := allowed(target, p)
	rel, rerr := filepath.Rel(dir, target)
	if !allow && (rerr != nil || rel == ".." || strings.HasPrefix(rel, "../")) {
		return Layer{}, imgfmt.Header{}, refuse("%s names the backing file %s%s, outside its directory; refused (if it is yours: --allow-backing %s; or flatten a copy: %s)",
			last.Path, target, describe(target), target, convert("qcow2", last.Path))
	}
	// Not even opened: opening a device can act (a tape rewinds).
	for _, k := range []string{"/proc/", "/sys/", "/dev/"} {
		if strings.HasPrefix(target, k) {
			return Layer{}, imgfmt.Header{}, refuse("%s names the backing file %s, a kernel interface, not an image; refused", last.Path, target)
		}
	}
	var fd int
	var err error
	if allow {
		fd, err = openat2(unix.AT_FDCWD, target, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	} else {
		var dfd int
		dfd, err = unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			fd, err = openat2(dfd, rel, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
			unix.Close(dfd)
		}
	}
	switch {
	case errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ELOOP):
		return Layer{}, imgfmt.Header{}, refuse("%s names the backing file %s, reached through a symlink that leaves its directory; refused (allow the real path with --allow-backing, or flatten a copy)", last.Path, target)
	case errors.Is(err, unix.ENOENT):
		return Layer{}, imgfmt.Header{}, refuse("%s names the backing file %s, which does not exist", last.Path, target)
	case err != nil:
		return Layer{}, imgfmt.Header{}, refuse("%s names the backing file %s, which cannot be opened: %v", last.Path, target, err)
	}
	return vetLayer(os.NewFile(uintptr(fd), target), target, name, h.BackingFormat)
}

func allowed(target string, p Policy) bool {
	for _, a := range p.AllowBacking {
		if filepath.Clean(a) == target {
			return true
		}
	}
	return false
}

// openat2 opens name read-only under the resolve rules; O_NONBLOCK keeps
// a FIFO from hanging.
func openat2(dirfd int, name string, resolve uint64) (int, error) {
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY, Resolve: resolve}
	for {
		fd, err := unix.Openat2(dirfd, name, &how)
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		return fd, err
	}
}

// hasProtocol says whether QEMU would read name as a protocol
// ("nbd://...", "json:{...}", "http:..."): a colon before any slash.
func hasProtocol(name string) bool {
	i := strings.IndexByte(name, ':')
	return i >= 0 && !strings.Contains(name[:i], "/")
}

// noLoop refuses a chain that comes back to a file it already holds.
func noLoop(seen map[[2]uint64]string, l Layer) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(l.File.Fd()), &st); err != nil {
		return err
	}
	k := [2]uint64{st.Dev, st.Ino}
	if prev, ok := seen[k]; ok {
		return refuse("%s: its backing chain comes back to %s; refused", l.Path, prev)
	}
	seen[k] = l.Path
	return nil
}

// describe says what a path outside the image's directory is, without
// opening it: " (a block device)", or "" for a regular file.
func describe(path string) string {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return ""
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return ""
	case unix.S_IFLNK:
		return " (a symlink)"
	}
	return " (" + kindOf(st.Mode) + ")"
}

func kindOf(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a directory"
	}
	return "not a file"
}

// pseudoFS names the kernel filesystem f is on, "" for a real one.
func pseudoFS(f *os.File) string {
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &sfs); err != nil {
		return ""
	}
	switch sfs.Type {
	case unix.PROC_SUPER_MAGIC:
		return "/proc"
	case unix.SYSFS_MAGIC:
		return "/sys"
	case unix.DEBUGFS_MAGIC, unix.TRACEFS_MAGIC:
		return "debugfs"
	case unix.SECURITYFS_MAGIC:
		return "securityfs"
	case unix.CGROUP_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC:
		return "cgroupfs"
	}
	return ""
}

// convert is the command that makes a safe copy: the format given, never
// probed, into a self-contained qcow2 beside the original.
func convert(format, path string) string {
	return "qemu-img convert -f " + format + " -O qcow2 " + filepath.Base(path) + " copy.qcow2"
}

// human writes a byte count the way a person reads it.
func human(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	f := float64(n)
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}
