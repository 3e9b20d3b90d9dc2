// Package mountinfo parses /proc/<pid>/mountinfo (proc(5)): the mount
// table guestcheck judges fstab, usage and freezing against, and the one
// sealprep's --image teardown walks. Parsing is pure; reading the live
// file is the caller's business.
package mountinfo

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/fstab"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Mount is one line of /proc/<pid>/mountinfo (proc(5)).
type Mount struct {
	// ID and Parent are the mount IDs.
	ID, Parent int
	// Major and Minor identify the filesystem's device (st_dev); for
	// btrfs and other filesystems without one device they are 0:N.
	Major, Minor uint32
	// Root is the directory of the filesystem mounted here ("/" unless a
	// bind mount of a subdirectory).
	Root string
	// MountPoint is where it is mounted, relative to the process's root.
	MountPoint string
	// Options are the per-mount options ("rw", "noatime").
	Options []string
	// Optional are the tagged fields before "-" ("shared:1", "master:2").
	Optional []string
	// FSType is the filesystem type, with any subtype ("fuse.sshfs").
	FSType string
	// Source is the mount source ("/dev/vda1", "tmpfs", "host:/x").
	Source string
	// SuperOptions are the superblock options.
	SuperOptions []string
}

// Parse parses the bytes of /proc/self/mountinfo. Fields are separated
// by single spaces, paths carry octal escapes, and any number of optional
// fields ends at a lone "-". Bad lines are returned as Problems and
// parsing continues.
func Parse(b []byte) ([]Mount, []problem.Problem) {
	var out []Mount
	var errs []problem.Problem
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseLine(line)
		if err != nil {
			errs = append(errs, problem.Problem{Line: i + 1, Msg: err.Error()})
			continue
		}
		out = append(out, m)
	}
	return out, errs
}

// parseLine parses one non-blank line.
func parseLine(line string) (Mount, error) {
	f := strings.Split(line, " ")
	var m Mount
	if len(f) < 10 {
		return m, fmt.Errorf("has %d fields, want at least 10", len(f))
	}
	var err error
	if m.ID, err = strconv.Atoi(f[0]); err != nil {
		return m, fmt.Errorf("mount ID %q is not a number", f[0])
	}
	if m.Parent, err = strconv.Atoi(f[1]); err != nil {
		return m, fmt.Errorf("parent ID %q is not a number", f[1])
	}
	if m.Major, m.Minor, err = ParseMajorMinor(f[2]); err != nil {
		return m, err
	}
	m.Root = fstab.Unescape(f[3])
	m.MountPoint = fstab.Unescape(f[4])
	if !strings.HasPrefix(m.MountPoint, "/") {
		return m, fmt.Errorf("mount point %q is not absolute", f[4])
	}
	m.Options = strings.Split(f[5], ",")
	sep := -1
	for j := 6; j < len(f); j++ {
		if f[j] == "-" {
			sep = j
			break
		}
		m.Optional = append(m.Optional, f[j])
	}
	if sep < 0 {
		return m, fmt.Errorf(`no "-" separator before the filesystem type`)
	}
	rest := f[sep+1:]
	if len(rest) < 2 || rest[0] == "" {
		return m, fmt.Errorf(`want filesystem type, source and options after "-"`)
	}
	m.FSType = fstab.Unescape(rest[0])
	m.Source = fstab.Unescape(rest[1])
	if len(rest) > 2 {
		m.SuperOptions = strings.Split(strings.Join(rest[2:], " "), ",")
	}
	return m, nil
}

// ParseMajorMinor parses "254:1".
func ParseMajorMinor(s string) (uint32, uint32, error) {
	a, b, ok := strings.Cut(s, ":")
	ma, err1 := strconv.ParseUint(a, 10, 32)
	mi, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("device %q is not major:minor", s)
	}
	return uint32(ma), uint32(mi), nil
}

// HasOption reports whether the per-mount or superblock options contain o.
func (m Mount) HasOption(o string) bool {
	for _, x := range append(append([]string(nil), m.Options...), m.SuperOptions...) {
		if x == o {
			return true
		}
	}
	return false
}

// Find returns the mount that is visible at mountpoint p: the last one
// listed for it, since later mounts stack on top of earlier ones.
func Find(ms []Mount, p string) (Mount, bool) {
	p = path.Clean("/" + p)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].MountPoint == p {
			return ms[i], true
		}
	}
	return Mount{}, false
}

// ParseTable parses a whole live mount table. A table of which no line
// parses is an error, since every system mounts "/"; bad lines in a table
// that has good ones are dropped, as the kernel writes none.
func ParseTable(b []byte) ([]Mount, error) {
	ms, errs := Parse(b)
	if len(ms) == 0 {
		if len(errs) > 0 {
			return nil, fmt.Errorf("no line of /proc/self/mountinfo parses: %v", errs[0])
		}
		return nil, errors.New("/proc/self/mountinfo is empty")
	}
	return ms, nil
}

// Holding returns the mount holding path p: the mount whose mount point
// is the longest prefix of p (the last such entry when mounts stack).
func Holding(ms []Mount, p string) (Mount, bool) {
	p = path.Clean("/" + p)
	best := -1
	for i, m := range ms {
		mp := m.MountPoint
		if p == mp || mp == "/" || strings.HasPrefix(p, mp+"/") {
			if best < 0 || len(mp) >= len(ms[best].MountPoint) {
				best = i
			}
		}
	}
	if best < 0 {
		return Mount{}, false
	}
	return ms[best], true
}
