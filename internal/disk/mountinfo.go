package disk

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
)

// MountInfo is one line of /proc/<pid>/mountinfo (proc(5)).
type MountInfo struct {
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

// ParseMountinfo parses the bytes of /proc/self/mountinfo. Fields are
// separated by single spaces, paths carry octal escapes, and any number of
// optional fields ends at a lone "-". Bad lines are returned as LineErrors
// and parsing continues.
func ParseMountinfo(b []byte) ([]MountInfo, []LineError) {
	var out []MountInfo
	var errs []LineError
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		m, err := parseMountinfoLine(line)
		if err != nil {
			errs = append(errs, LineError{Line: i + 1, Text: line, Reason: err.Error()})
			continue
		}
		out = append(out, m)
	}
	return out, errs
}

func parseMountinfoLine(line string) (MountInfo, error) {
	f := strings.Split(line, " ")
	var m MountInfo
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
	if m.Major, m.Minor, err = parseMajorMinor(f[2]); err != nil {
		return m, err
	}
	m.Root = Unescape(f[3])
	m.MountPoint = Unescape(f[4])
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
	m.FSType = Unescape(rest[0])
	m.Source = Unescape(rest[1])
	if len(rest) > 2 {
		m.SuperOptions = strings.Split(strings.Join(rest[2:], " "), ",")
	}
	return m, nil
}

// parseMajorMinor parses "254:1".
func parseMajorMinor(s string) (uint32, uint32, error) {
	a, b, ok := strings.Cut(s, ":")
	ma, err1 := strconv.ParseUint(a, 10, 32)
	mi, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("device %q is not major:minor", s)
	}
	return uint32(ma), uint32(mi), nil
}

// HasOption reports whether the per-mount or superblock options contain o.
func (m MountInfo) HasOption(o string) bool {
	for _, x := range append(append([]string(nil), m.Options...), m.SuperOptions...) {
		if x == o {
			return true
		}
	}
	return false
}

// FindMount returns the mount that is visible at mountpoint p: the last one
// listed for it, since later mounts stack on top of earlier ones.
func FindMount(ms []MountInfo, p string) (MountInfo, bool) {
	p = fs.Clean(p)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].MountPoint == p {
			return ms[i], true
		}
	}
	return MountInfo{}, false
}

// SwapArea is one active swap area from /proc/swaps.
type SwapArea struct {
	// Filename is the device or file path, escapes decoded.
	Filename string
	// Type is "partition" or "file".
	Type string
	// Size is in KiB.
	Size int64
}

// ParseSwaps parses /proc/swaps; the header line is skipped and bad lines
// are returned as LineErrors.
func ParseSwaps(b []byte) ([]SwapArea, []LineError) {
	var out []SwapArea
	var errs []LineError
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || (i == 0 && f[0] == "Filename") {
			continue
		}
		if len(f) < 3 {
			errs = append(errs, LineError{Line: i + 1, Text: line, Reason: fmt.Sprintf("has %d fields, want at least 3", len(f))})
			continue
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			errs = append(errs, LineError{Line: i + 1, Text: line, Reason: fmt.Sprintf("size %q is not a number", f[2])})
			continue
		}
		out = append(out, SwapArea{Filename: Unescape(f[0]), Type: f[1], Size: size})
	}
	return out, errs
}

// ReadMountinfo reads and parses the live mount table through r. A table
// of which no line parses is an error, since every system mounts "/".
func ReadMountinfo(r *fs.Root) ([]MountInfo, error) {
	b, err := r.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	ms, errs := ParseMountinfo(b)
	if len(ms) == 0 {
		if len(errs) > 0 {
			return nil, fmt.Errorf("no line of /proc/self/mountinfo parses: %v", errs[0])
		}
		return nil, errors.New("/proc/self/mountinfo is empty")
	}
	return ms, nil
}
