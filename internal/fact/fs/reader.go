package fs

import (
	"os"
	"strings"
)

// Reader is the read face of a guest root that every fact reader takes, so
// that guestcheck (Root), sealprep (Confined) and an attached image share
// one reader per fact. Paths are the guest's own absolute paths and every
// symlink resolves inside the root.
//
// The two roots differ in what they refuse, not in what they return:
// Confined.ReadFile opens regular files only, and Confined.ReadDir refuses
// a directory that is itself a symlink (ErrSymlink); Root follows both, as
// a reader of the live system must (/proc, /sys).
type Reader interface {
	// ReadFile reads p whole, up to MaxFileSize.
	ReadFile(p string) ([]byte, error)
	// ReadFileLimit reads p whole, up to limit bytes (ErrTooLarge past it).
	ReadFileLimit(p string, limit int64) ([]byte, error)
	// Stat describes p, following symlinks inside the root.
	Stat(p string) (Entry, error)
	// Lstat describes p itself, not following a final symlink.
	Lstat(p string) (Entry, error)
	// ReadDir lists directory p sorted by name, each entry described
	// without following it.
	ReadDir(p string) ([]Entry, error)
	// Readlink returns symlink p's target as stored.
	Readlink(p string) (string, error)
	// Display is the name to show an operator for guest path p.
	Display(p string) string
	// IsHost reports whether the root is the running system's own "/".
	IsHost() bool
}

var (
	_ Reader = (*Root)(nil)
	_ Reader = (*Confined)(nil)
)

// ErrorText is err's text for a message about guest path p, naming p
// once and without Go's operation words: "/etc/passwd: permission
// denied". fs's errors already name the path they failed on, and a
// caller that wrote "p: " before one would name it twice.
func ErrorText(p string, err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Path + ": " + pe.Err.Error()
	}
	if s := err.Error(); strings.Contains(s, p) {
		return s
	}
	return p + ": " + err.Error()
}
