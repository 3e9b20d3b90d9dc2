package prove

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// agentFS is an fs.Reader over a running clone's guest agent, so that
// guestid.Read, the one reader of a guest's identity, reads a clone
// without guestcheck exactly as guestcheck reads itself. Files are read
// with guest-file-open in mode "r"; kinds and directory listings come
// from find(1) run through guest-exec with an argument array (the clone
// is prove's own throwaway VM). Nothing is written.
type agentFS struct {
	ctx context.Context
	a   qga.Agent
}

var _ fs.Reader = agentFS{}

// maxListing bounds one find(1) answer: a directory of identity files
// lists a few dozen names.
const maxListing = 1 << 20

// findFormat prints one entry per NUL-terminated record: kind, mode,
// size, owner, group, links, mtime, ctime, then the name (which may hold
// spaces, so it comes last).
const findFormat = `%y %m %s %U %G %n %T@ %C@ %f\0`

func (r agentFS) ReadFile(p string) ([]byte, error) { return r.ReadFileLimit(p, fs.MaxFileSize) }

func (r agentFS) ReadFileLimit(p string, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = fs.MaxFileSize
	}
	b, err := qga.ReadFile(r.ctx, r.a, p, limit)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, qga.ErrTooLarge):
		return nil, &os.PathError{Op: "read", Path: p, Err: fs.ErrTooLarge}
	}
	return nil, &os.PathError{Op: "open", Path: p, Err: agentErr(err)}
}

// agentErr maps the agent's error text for a failed open onto the errors
// the fact readers branch on.
func agentErr(err error) error {
	var qe *qga.Error
	if !errors.As(err, &qe) {
		return err
	}
	switch {
	case strings.Contains(qe.Desc, "No such file or directory"), strings.Contains(qe.Desc, "Not a directory"):
		return iofs.ErrNotExist
	case strings.Contains(qe.Desc, "Permission denied"):
		return iofs.ErrPermission
	}
	return errors.New(cleanLine(qe.Desc))
}

// exists reports whether the guest has a readable file at p, by
// qga.ReadFile of at most one byte: the agent's file calls only, never
// guest-exec (which an agent may refuse while it reads files). A file the
// agent will not open or read is not there; an agent that does not
// answer is an error.
func (r agentFS) exists(p string) (bool, error) {
	_, err := qga.ReadFile(r.ctx, r.a, p, 1)
	var qe *qga.Error
	switch {
	case err == nil, errors.Is(err, qga.ErrTooLarge):
		return true, nil
	case errors.As(err, &qe):
		return false, nil
	}
	return false, err
}

func (r agentFS) Stat(p string) (fs.Entry, error)  { return r.one(p, true) }
func (r agentFS) Lstat(p string) (fs.Entry, error) { return r.one(p, false) }

func (r agentFS) one(p string, follow bool) (fs.Entry, error) {
	args := []string{p, "-maxdepth", "0", "-printf", findFormat}
	if follow {
		args = append([]string{"-L"}, args...)
	}
	es, err := r.find("stat", p, args)
	if err != nil {
		return fs.Entry{}, err
	}
	if len(es) != 1 {
		return fs.Entry{}, &os.PathError{Op: "stat", Path: p, Err: fmt.Errorf("find printed %d entries", len(es))}
	}
	es[0].Name = path.Base(p)
	return es[0], nil
}

func (r agentFS) ReadDir(p string) ([]fs.Entry, error) {
	es, err := r.find("readdir", p, []string{p, "-mindepth", "1", "-maxdepth", "1", "-printf", findFormat})
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	return es, err
}

func (r agentFS) Readlink(p string) (string, error) {
	res, err := qga.Run(r.ctx, r.a, "/usr/bin/find", []string{p, "-maxdepth", "0", "-type", "l", "-printf", "%l"}, maxListing)
	if err != nil {
		return "", &os.PathError{Op: "readlink", Path: p, Err: err}
	}
	if res.Exit != 0 || len(res.Stdout) == 0 {
		return "", &os.PathError{Op: "readlink", Path: p, Err: findErr(res.Stderr)}
	}
	return string(res.Stdout), nil
}

func (r agentFS) Display(p string) string { return p }

// IsHost is false: the reader is never the host's own root.
func (r agentFS) IsHost() bool { return false }

// find runs find(1) with args in the guest and parses its records.
func (r agentFS) find(op, p string, args []string) ([]fs.Entry, error) {
	res, err := qga.Run(r.ctx, r.a, "/usr/bin/find", args, maxListing)
	if err != nil {
		return nil, &os.PathError{Op: op, Path: p, Err: err}
	}
	if res.Exit != 0 {
		return nil, &os.PathError{Op: op, Path: p, Err: findErr(res.Stderr)}
	}
	return parseFind(res.Stdout)
}

// findErr is find's complaint as an error, ErrNotExist or ErrPermission
// where it says so.
func findErr(stderr []byte) error {
	s := string(stderr)
	switch {
	case strings.Contains(s, "No such file or directory"):
		return iofs.ErrNotExist
	case strings.Contains(s, "Permission denied"):
		return iofs.ErrPermission
	}
	return fmt.Errorf("find: %s", cleanLine(s))
}

// findKinds maps find's %y letters onto fs kinds.
var findKinds = map[string]fs.Kind{
	"f": fs.KindRegular, "d": fs.KindDir, "l": fs.KindSymlink, "p": fs.KindFIFO,
	"s": fs.KindSocket, "c": fs.KindCharDevice, "b": fs.KindBlockDevice,
}

// parseFind reads findFormat's records. It is pure, for the fuzz target.
func parseFind(out []byte) ([]fs.Entry, error) {
	var es []fs.Entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		f := strings.SplitN(string(rec), " ", 9)
		if len(f) != 9 {
			return es, fmt.Errorf("find printed %q, not an entry", cleanLine(string(rec)))
		}
		kind, ok := findKinds[f[0]]
		perm, err1 := strconv.ParseUint(f[1], 8, 32)
		size, err2 := strconv.ParseInt(f[2], 10, 64)
		uid, err3 := strconv.ParseUint(f[3], 10, 32)
		gid, err4 := strconv.ParseUint(f[4], 10, 32)
		nlink, err5 := strconv.ParseUint(f[5], 10, 32)
		mt, err6 := strconv.ParseFloat(f[6], 64)
		ct, err7 := strconv.ParseFloat(f[7], 64)
		if err := errors.Join(err1, err2, err3, err4, err5, err6, err7); !ok || err != nil {
			return es, fmt.Errorf("find printed %q, not an entry", cleanLine(string(rec)))
		}
		es = append(es, fs.Entry{Name: f[8], Kind: kind, Perm: uint32(perm), Size: size, UID: uint32(uid), GID: uint32(gid),
			Nlink: uint32(nlink), Mtime: epoch(mt), Ctime: epoch(ct)})
	}
	return es, nil
}

func epoch(f float64) time.Time {
	sec := int64(f)
	return time.Unix(sec, int64((f-float64(sec))*1e9))
}
