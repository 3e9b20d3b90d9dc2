package image

import (
	"errors"
	"strings"
	"syscall"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/mountinfo"
)

// TrimTarget is one filesystem whose free blocks --fstrim discards.
type TrimTarget struct {
	// Guest is its mount point in the guest ("/", "/boot").
	Guest string
	// Dir is where it is mounted on the host.
	Dir string
}

// TrimOutcome is what FITRIM did to one target: the bytes the kernel
// reports discarded, or why it could not, in the operator's words.
type TrimOutcome struct {
	// Guest is the target's guest mount point.
	Guest string
	// Bytes is what the kernel reports discarded.
	Bytes uint64
	// Err is why the target was not trimmed; empty when it was.
	Err string
}

// RootTrimTargets lists the filesystems of a root mounted at dir on this
// host: dir itself and every block-device filesystem mounted below it, as
// /proc/self/mountinfo shows them.
func RootTrimTargets(dir string) []TrimTarget { return rootTrimTargets(dir, mounts()) }

// rootTrimTargets picks each filesystem once, at a mount of its whole
// tree: bind mounts of a file or a subdirectory are the same blocks
// again, and so is a second mount of the root's own device.
func rootTrimTargets(dir string, ms []mountinfo.Mount) []TrimTarget {
	ts := []TrimTarget{{"/", dir}}
	seen := map[string]bool{dir: true}
	devs := map[[2]uint32]bool{}
	for _, m := range ms {
		if m.MountPoint == dir {
			devs[[2]uint32{m.Major, m.Minor}] = true
		}
	}
	for _, m := range ms {
		rel, ok := strings.CutPrefix(m.MountPoint, strings.TrimSuffix(dir, "/")+"/")
		dev := [2]uint32{m.Major, m.Minor}
		if !ok || seen[m.MountPoint] || devs[dev] || m.Root != "/" || !strings.HasPrefix(m.Source, "/dev/") {
			continue
		}
		seen[m.MountPoint], devs[dev] = true, true
		ts = append(ts, TrimTarget{"/" + rel, m.MountPoint})
	}
	return ts
}

// Trim runs FITRIM on every target. Each is synced first (by fs.Trim), so
// blocks of files just removed count as free.
func Trim(ts []TrimTarget) []TrimOutcome {
	var out []TrimOutcome
	for _, t := range ts {
		n, err := fs.Trim(t.Dir)
		r := TrimOutcome{Guest: t.Guest, Bytes: n}
		if err != nil {
			r.Err = err.Error()
			if errors.Is(err, syscall.EOPNOTSUPP) {
				r.Err = "the filesystem or its device does not support discard"
			}
		}
		out = append(out, r)
	}
	return out
}
