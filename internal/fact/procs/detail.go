package procs

import (
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Bounds of the per-process details, which only a few processes' callers
// ask for.
const (
	// MaxEnviron bounds /proc/PID/environ.
	MaxEnviron = 64 << 10
	// MaxFDs is the most descriptors of one process looked at.
	MaxFDs = 65536
)

// Environ is process pid's initial environment; nil when it cannot be
// read (another user's process, a kernel thread) or is over MaxEnviron.
func Environ(r fs.Reader, pid int) map[string]string {
	b, err := r.ReadFileLimit("/proc/"+strconv.Itoa(pid)+"/environ", MaxEnviron)
	if err != nil {
		return nil
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// FDTargets lists the targets of process pid's open descriptors (at most
// MaxFDs), in descriptor-name order; nil when they cannot be read.
func FDTargets(r fs.Reader, pid int) []string {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	names, err := dirNames(r, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, fd := range names[:min(len(names), MaxFDs)] {
		if t, err := r.Readlink(dir + "/" + fd); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// dirNames lists directory p's names, sorted, without a stat of each
// entry when r can (a Root).
func dirNames(r fs.Reader, p string) ([]string, error) {
	if n, ok := r.(interface {
		ReadDirNames(p string) ([]string, error)
	}); ok {
		return n.ReadDirNames(p)
	}
	ents, err := r.ReadDir(p)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name)
	}
	return names, err
}

// SocketOwners finds the processes of t holding the sockets want lists
// (by inode), from the links in /proc/PID/fd. The walk stops once every
// socket is found, at ctx's end, or after Budget, so sockets nobody asked
// about cost nothing. owners maps a found inode to its PID (the first,
// lowest, holder). known is false when some process's descriptors could
// not be read (not root) or t is incomplete: a socket not found may then
// belong to any process. err is why /proc could not be listed, or ctx's.
func SocketOwners(ctx context.Context, r fs.Reader, t *Table, want map[uint64]bool) (owners map[uint64]int, known bool, err error) {
	if t.Err != nil {
		return nil, false, t.Err
	}
	ctx, cancel := context.WithTimeout(ctx, Budget)
	defer cancel()
	owners, known = map[uint64]int{}, !t.Cut
	for _, p := range t.Procs {
		if len(owners) == len(want) {
			break
		}
		if err := ctx.Err(); err != nil {
			return owners, false, err
		}
		inodes, err := socketInodes(r, p.PID)
		if errors.Is(err, iofs.ErrPermission) {
			known = false
		}
		for _, ino := range inodes {
			if _, seen := owners[ino]; want[ino] && !seen {
				owners[ino] = p.PID
			}
		}
	}
	return owners, known, nil
}

// socketInodes lists the socket inodes among process pid's descriptors.
// A Root reads the links with readlinkat on one open fd directory: a
// Readlink per link would resolve the whole path again each time, which
// under emulation was most of the walk's cost.
func socketInodes(r fs.Reader, pid int) ([]uint64, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	o, ok := r.(interface {
		Open(p string) (*os.File, error)
	})
	if !ok {
		var out []uint64
		for _, t := range FDTargets(r, pid) {
			if ino, ok := socketInode([]byte(t)); ok {
				out = append(out, ino)
			}
		}
		return out, nil
	}
	d, err := o.Open(dir)
	if err != nil {
		return nil, err // also: the process exited
	}
	defer d.Close()
	fds, err := d.Readdirnames(MaxFDs)
	if err != nil {
		return nil, err
	}
	var out []uint64
	buf := make([]byte, 128)
	for _, fd := range fds {
		n, err := unix.Readlinkat(int(d.Fd()), fd, buf)
		if err != nil {
			continue
		}
		if ino, ok := socketInode(buf[:n]); ok {
			out = append(out, ino)
		}
	}
	return out, nil
}

// socketInode parses a descriptor link "socket:[INODE]".
func socketInode(t []byte) (uint64, bool) {
	const pre = "socket:["
	if len(t) < len(pre)+2 || string(t[:len(pre)]) != pre || t[len(t)-1] != ']' {
		return 0, false
	}
	ino, err := strconv.ParseUint(string(t[len(pre):len(t)-1]), 10, 64)
	return ino, err == nil
}
