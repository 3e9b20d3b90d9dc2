package cloudconfig

import (
	iofs "io/fs"
	"path"
	"sort"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Info is what the check needs of a file's inode.
type Info struct {
	Mode     iofs.FileMode
	UID, GID int
	ModTime  time.Time
	Size     int64
}

// Source is the guest's filesystem as the check reads it: the running
// system or an image root through fs.Root, or a captured tarball in tests.
type Source interface {
	ReadFile(p string) ([]byte, error)
	// Stat follows symlinks inside the guest; Lstat does not follow the last one.
	Stat(p string) (Info, error)
	Lstat(p string) (Info, error)
	ReadDirNames(p string) ([]string, error)
	// Glob returns the paths matching pattern (path.Match syntax), sorted.
	Glob(pattern string) ([]string, error)
	// Display names p in messages.
	Display(p string) string
}

// RootSource reads through an fs.Root.
type RootSource struct{ R *fs.Root }

// ReadFile implements Source.
func (s RootSource) ReadFile(p string) ([]byte, error) { return s.R.ReadFile(p) }

// Stat implements Source.
func (s RootSource) Stat(p string) (Info, error) { return infoOf(s.R.Stat(p)) }

// Lstat implements Source.
func (s RootSource) Lstat(p string) (Info, error) { return infoOf(s.R.Lstat(p)) }

// Display implements Source.
func (s RootSource) Display(p string) string { return s.R.Display(p) }

// ReadDirNames implements Source.
func (s RootSource) ReadDirNames(p string) ([]string, error) {
	return s.R.ReadDirNames(p)
}

// Glob implements Source over ReadDirNames, for patterns whose wildcards
// are in the last component (as sshd's and cloud-init's are).
func (s RootSource) Glob(pattern string) ([]string, error) { return glob(s, pattern) }

func glob(s Source, pattern string) ([]string, error) {
	dir, base := path.Split(pattern)
	if _, err := path.Match(base, ""); err != nil {
		return nil, err
	}
	names, err := s.ReadDirNames(path.Clean(dir))
	if err != nil {
		return nil, nil // a missing directory matches nothing, as glob(3)
	}
	var out []string
	for _, n := range names {
		if ok, _ := path.Match(base, n); ok {
			out = append(out, path.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out, nil
}

func infoOf(e fs.Entry, err error) (Info, error) {
	if err != nil {
		return Info{}, err
	}
	return Info{Mode: e.Mode(), ModTime: e.Mtime, Size: e.Size, UID: int(e.UID), GID: int(e.GID)}, nil
}
