package seal

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"strconv"
	"strings"
	"unicode"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Target is the confined root as preflight needs it.
type Target interface {
	View
	ReadOnly(p string) (bool, error)
}

var _ Target = (*fs.Confined)(nil)

// Preflight returns the reasons not to seal root at all: a directory
// that is not an OS root, a read-only target (when mutating), live mode
// inside a container. Forcible ones are dropped under opts.Force (or when
// the template record says apply's --force passed them), and come back
// as notes. hostRead reads the machine sealprep runs on (for
// container hints); it is only used in live mode.
func Preflight(root Target, opts Options, mutating bool, hostRead func(string) ([]byte, error)) ([]Refusal, []Note) {
	var refs []Refusal
	var notes []Note
	// refuse records why (reason) and what to do instead (fix): under
	// --force a forcible one is noted by its reason alone, as what went
	// ahead despite it.
	refuse := func(forcible bool, path, reason, fix string) {
		if forcible && (opts.Force || opts.wasForced(OpPreflight, path)) {
			notes = append(notes, Note{Op: OpPreflight, Path: path, Message: reason, Forced: true})
			return
		}
		refs = append(refs, Refusal{Op: OpPreflight, Path: path, Message: reason, Fix: fix, Forcible: forcible})
	}
	if _, err := root.Stat(osReleasePath); err != nil {
		reason, fix := osReleaseProblem(root, err)
		refuse(true, "", reason, fix)
	}
	if mutating {
		for _, p := range []string{"/", "/etc", "/var"} {
			ro, err := root.ReadOnly(p)
			if err == nil && ro {
				refuse(false, p, "on a read-only mount", "remount it read-write first")
				break
			}
		}
	}
	if opts.Live && hostRead != nil {
		if hint := DetectContainer(hostRead); hint != "" {
			refuse(true, "/", fmt.Sprintf("sealprep runs inside a container (%s): sealing would clear the container's own files, not an image", hint),
				"seal the image from outside with --root or --image, or add --force to seal the container anyway")
		}
	}
	return refs, notes
}

// osReleasePath is the file whose presence marks an operating system root.
const osReleasePath = "/etc/os-release"

// osReleaseProblem words why /etc/os-release could not be found (err,
// from Stat): missing, a dangling symlink (named with where it points,
// which an image whose /usr was not mounted shows), or unreadable.
func osReleaseProblem(root Target, err error) (reason, fix string) {
	const fixRoot = "point --root at the mounted root filesystem, or add --force to seal it anyway"
	if !errors.Is(err, iofs.ErrNotExist) {
		return fs.ErrorText(osReleasePath, err) + ", so this cannot be told to be an operating system root", fixRoot
	}
	if e, lerr := root.Lstat(osReleasePath); lerr == nil && e.Kind == fs.KindSymlink {
		target, _ := root.Readlink(osReleasePath)
		target = shownTarget(target)
		return fmt.Sprintf("%s is a dangling symlink to %s, which is not in this root, so this does not look like an operating system root", osReleasePath, target),
			"mount the filesystem that holds " + target + " (such as a separate /usr) inside the root first; else " + fixRoot
	}
	return osReleasePath + " is missing, so this is not an operating system root", fixRoot
}

// shownTarget is a symlink target from the image, safe to print: as
// stored, or quoted when it holds anything but printable characters
// (escape sequences, line breaks), and cut to a readable length.
func shownTarget(t string) string {
	if len(t) > 256 {
		t = strings.ToValidUTF8(t[:256], "") + "..."
	}
	if strings.ContainsFunc(t, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(t)
	}
	return t
}

// DetectContainer returns the first hint that the process runs inside a
// container, or "". read reads files of the running system.
func DetectContainer(read func(string) ([]byte, error)) string {
	exists := func(p string) bool {
		_, err := read(p)
		return err == nil || !errors.Is(err, iofs.ErrNotExist)
	}
	if exists("/run/.containerenv") {
		return "/run/.containerenv (podman)"
	}
	if exists("/.dockerenv") {
		return "/.dockerenv (docker)"
	}
	if b, err := read("/run/systemd/container"); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return "/run/systemd/container says " + string(bytes.TrimSpace(b))
	}
	if b, err := read("/proc/1/environ"); err == nil {
		for _, kv := range bytes.Split(b, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("container=")); ok && len(v) > 0 {
				return "PID 1 has container=" + string(v)
			}
		}
	}
	if b, err := read("/proc/self/cgroup"); err == nil {
		for _, w := range []string{"/docker/", "/docker-", "/kubepods", "/lxc/", "/libpod-", "/containerd/"} {
			if bytes.Contains(b, []byte(w)) {
				return "/proc/self/cgroup mentions " + w
			}
		}
	}
	return ""
}
