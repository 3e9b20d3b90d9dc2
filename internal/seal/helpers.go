package seal

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"golang.org/x/sys/unix"
)

// Common kind sets.
var (
	regular     = fs.KindsOf(fs.KindRegular)
	regularLink = fs.KindsOf(fs.KindRegular, fs.KindSymlink)
	// anyTree is every kind but device nodes: a device node is never
	// something an operation means to delete, and a planted one is left
	// for a person to look at.
	anyTree = fs.KindsOf(fs.KindRegular, fs.KindDir, fs.KindSymlink, fs.KindFIFO, fs.KindSocket)
	// stateTree is for state directories: files, links and subdirectories.
	stateTree = fs.KindsOf(fs.KindRegular, fs.KindDir, fs.KindSymlink)
)

// absent reports whether err means the path is not there: missing, or a
// parent that is not a directory.
func absent(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}

// unresolvable reports errors that make a path meaningless rather than
// unreadable: symlink loops and too-long names.
func unresolvable(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENAMETOOLONG)
}

// lstat is Root.Lstat with absence as (zero, false, nil) and unresolvable
// paths noted.
func (p *Planner) lstat(name string) (fs.Entry, bool, error) {
	e, err := p.Root.Lstat(name)
	if err == nil {
		return e, true, nil
	}
	if absent(err) {
		return e, false, nil
	}
	if unresolvable(err) {
		p.Note(name, "cannot be resolved (%v)", errors.Unwrap(err))
		return e, false, nil
	}
	return e, false, err
}

// exists reports whether name resolves (following symlinks in-root).
func (p *Planner) exists(name string) bool {
	_, err := p.Root.Stat(name)
	return err == nil
}

// readFile reads name (following symlinks in-root); absent is (nil, false, nil).
func (p *Planner) readFile(name string) ([]byte, bool, error) {
	b, err := p.Root.ReadFile(name)
	if err == nil {
		return b, true, nil
	}
	if absent(err) || unresolvable(err) || errors.Is(err, fs.ErrKind) {
		return nil, false, nil
	}
	return nil, false, err
}

// removePath plans the removal of name when it exists and its kind is in
// kinds. A directory is scanned the way the executor will walk it: the
// action covers the entries of the listed kinds, and what would be kept is
// noted. Other kinds are noted and left alone.
func (p *Planner) removePath(name string, kinds fs.Kinds, reason string) ([]Action, error) {
	e, ok, err := p.lstat(name)
	if err != nil || !ok {
		return nil, err
	}
	return p.removeEntry(name, e, kinds, reason)
}

func (p *Planner) removeEntry(name string, e fs.Entry, kinds fs.Kinds, reason string) ([]Action, error) {
	if !kinds.Has(e.Kind) {
		p.Note(name, "is a %s, and this operation removes only %s", kindNoun(e.Kind), kindsNoun(kinds))
		return nil, nil
	}
	if e.Kind != fs.KindDir {
		return []Action{{Kind: Remove, Path: name, Kinds: kinds, Reason: reason}}, nil
	}
	st, err := p.Root.ScanTree(name, kinds)
	if err != nil {
		if errors.Is(err, fs.ErrMountPoint) {
			p.Note(name, "a mount point")
			return nil, nil
		}
		return nil, err
	}
	if st.Kept > 0 {
		p.Note(name, "keeps %d entries of kinds this operation does not remove (%s)", st.Kept, st.KeptKinds)
	}
	if st.Mounts > 0 {
		p.Note(name, "keeps %d directories on other mounts", st.Mounts)
	}
	if st.Removed == 0 {
		return nil, nil
	}
	return []Action{{Kind: Remove, Path: name, Kinds: kinds, Reason: reason, Entries: st.Removed}}, nil
}

// removePaths plans removePath for each name.
func (p *Planner) removePaths(names []string, kinds fs.Kinds, reason string) ([]Action, error) {
	var out []Action
	for _, n := range names {
		a, err := p.removePath(n, kinds, reason)
		if err != nil {
			return out, err
		}
		out = append(out, a...)
	}
	return out, nil
}

// readDir lists dir (never following dir itself); absent is nil, and a
// symlink or non-directory is noted.
func (p *Planner) readDir(dir string) ([]fs.Entry, error) {
	ents, err := p.Root.ReadDir(dir)
	switch {
	case err == nil:
		return ents, nil
	case absent(err):
		return nil, nil
	case errors.Is(err, fs.ErrSymlink):
		p.Note(dir, "the directory is a symlink, which sealprep does not follow")
		return nil, nil
	case errors.Is(err, fs.ErrKind):
		p.Note(dir, "not a directory")
		return nil, nil
	case unresolvable(err):
		p.Note(dir, "cannot be resolved")
		return nil, nil
	}
	return nil, err
}

// removeChildren plans the removal of the entries of dir that match (all
// when match is nil), keeping dir itself.
func (p *Planner) removeChildren(dir string, match func(e fs.Entry) bool, kinds fs.Kinds, reason string) ([]Action, error) {
	ents, err := p.readDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, e := range ents {
		if match != nil && !match(e) {
			continue
		}
		a, err := p.removeEntry(path.Join(dir, e.Name), e, kinds, reason)
		if err != nil {
			return out, err
		}
		out = append(out, a...)
	}
	return out, nil
}

// prefixed matches entries whose names start with one of the prefixes.
func prefixed(prefixes ...string) func(e fs.Entry) bool {
	return func(e fs.Entry) bool {
		for _, pre := range prefixes {
			if strings.HasPrefix(e.Name, pre) {
				return true
			}
		}
		return false
	}
}

// truncatePath plans emptying regular file name in place; perm >= 0 also
// asks for that mode. Nothing when it is already empty (with that mode).
func (p *Planner) truncatePath(name string, perm int, reason string) ([]Action, error) {
	e, ok, err := p.lstat(name)
	if err != nil || !ok {
		return nil, err
	}
	return p.truncateEntry(name, e, perm, reason), nil
}

func (p *Planner) truncateEntry(name string, e fs.Entry, perm int, reason string) []Action {
	if e.Kind != fs.KindRegular {
		p.Note(name, "is a %s, not a regular file", kindNoun(e.Kind))
		return nil
	}
	if e.Size == 0 && (perm < 0 || e.Perm == uint32(perm)) {
		return nil
	}
	a := Action{Kind: Truncate, Path: name, Reason: reason, Links: links(e)}
	if perm >= 0 {
		a.Mode = Mode(perm)
	}
	return []Action{a}
}

// rewritePath plans replacing regular file name with edit(content) when
// that differs. The action carries the old content's hash, so the executor
// refuses to overwrite a file that changed in between.
func (p *Planner) rewritePath(name, reason string, edit func([]byte) []byte) ([]Action, error) {
	e, ok, err := p.lstat(name)
	if err != nil || !ok {
		return nil, err
	}
	if e.Kind != fs.KindRegular {
		p.Note(name, "is a %s, not a regular file", kindNoun(e.Kind))
		return nil, nil
	}
	// An earlier operation in this plan may already rewrite this file
	// (hostname and net-mac-pins both edit ifcfg files): chain on its
	// result, so that each action's expected content is what the previous
	// one leaves.
	old, planned := p.rewritten[name]
	if !planned {
		b, ok, err := p.readFile(name)
		if err != nil || !ok {
			return nil, err
		}
		old = b
	}
	nw := edit(old)
	if bytes.Equal(old, nw) {
		return nil, nil
	}
	if p.rewritten == nil {
		p.rewritten = map[string][]byte{}
	}
	p.rewritten[name] = nw
	return []Action{{Kind: Rewrite, Path: name, Reason: reason, Content: string(nw), Expect: fs.SHA256(old), Links: links(e)}}, nil
}

// links is e's link count when it is a regular file with other names.
func links(e fs.Entry) uint32 {
	if e.Kind == fs.KindRegular && e.Nlink > 1 {
		return e.Nlink
	}
	return 0
}

// walk calls fn for every entry under dir, depth first in name order. It
// never follows dir if dir is a symlink, never follows symlinks inside,
// and does not enter directories on another mount (noted) or those prune
// says to skip.
func (p *Planner) walk(dir string, prune func(name string, e fs.Entry) bool, fn func(name string, e fs.Entry)) error {
	top, ok, err := p.lstat(dir)
	if err != nil || !ok {
		return err
	}
	if top.Kind == fs.KindSymlink {
		p.Note(dir, "the directory is a symlink, which sealprep does not follow")
		return nil
	}
	if top.Kind != fs.KindDir {
		p.Note(dir, "not a directory")
		return nil
	}
	return p.walkDir(dir, top, prune, fn, 0)
}

func (p *Planner) walkDir(dir string, self fs.Entry, prune func(string, fs.Entry) bool, fn func(string, fs.Entry), depth int) error {
	ents, err := p.Root.ReadDir(dir)
	if err != nil {
		if absent(err) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		name := path.Join(dir, e.Name)
		if leftoverTemp(e) {
			// A run killed between writing a replacement and renaming it
			// left this; it is sealprep's own, never the operation's file.
			p.leftovers = append(p.leftovers, Action{Kind: Remove, Path: name, Kinds: regularLink,
				Reason: "temporary file left by an interrupted sealprep run"})
			continue
		}
		if prune != nil && prune(name, e) {
			continue
		}
		if e.Kind == fs.KindDir {
			if !e.SameMount(self) {
				p.Note(name, "not entered: another mount")
				continue
			}
			if depth >= 64 {
				p.Note(name, "not entered: nested too deep")
				continue
			}
			if err := p.walkDir(name, e, prune, fn, depth+1); err != nil {
				return err
			}
			continue
		}
		fn(name, e)
	}
	return nil
}

// leftoverTemp reports whether e is a temporary file that the confined
// primitives name ".<base>.sealprep~".
func leftoverTemp(e fs.Entry) bool {
	return (e.Kind == fs.KindRegular || e.Kind == fs.KindSymlink) && len(e.Name) > len(fs.TempSuffix)+1 &&
		strings.HasPrefix(e.Name, ".") && strings.HasSuffix(e.Name, fs.TempSuffix)
}

// homes lists root's home and every home directory in /etc/passwd, once
// each, in passwd order.
func (p *Planner) homes() ([]string, error) {
	b, _, err := p.readFile("/etc/passwd")
	if err != nil {
		return nil, fmt.Errorf("read /etc/passwd: %w", err)
	}
	return passwdHomes(b), nil
}

// kindNoun is k as a person says it: "regular file", "directory".
func kindNoun(k fs.Kind) string {
	switch k {
	case fs.KindRegular:
		return "regular file"
	case fs.KindDir:
		return "directory"
	case fs.KindFIFO:
		return "FIFO"
	case fs.KindCharDevice:
		return "character device"
	case fs.KindBlockDevice:
		return "block device"
	}
	return k.String() // symlink, socket
}

// kindsNoun is ks in the plural, joined: "regular files and symlinks".
func kindsNoun(ks fs.Kinds) string {
	var names []string
	for _, k := range ks.List() {
		n := kindNoun(k) + "s"
		if k == fs.KindDir {
			n = "directories"
		}
		names = append(names, n)
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
