package fs

import (
	iofs "io/fs"
	"time"

	"golang.org/x/sys/unix"
)

// rawInfo adapts a raw stat to fs.FileInfo for Lstat under image roots.
type rawInfo struct {
	name string
	st   unix.Stat_t
}

func statInfo(name string, st *unix.Stat_t) iofs.FileInfo { return &rawInfo{name: name, st: *st} }

func (i *rawInfo) Name() string       { return i.name }
func (i *rawInfo) Size() int64        { return i.st.Size }
func (i *rawInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *rawInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *rawInfo) Sys() any           { return &i.st }
func (i *rawInfo) Mode() iofs.FileMode {
	m := iofs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= iofs.ModeDir
	case unix.S_IFLNK:
		m |= iofs.ModeSymlink
	case unix.S_IFIFO:
		m |= iofs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= iofs.ModeSocket
	case unix.S_IFCHR:
		m |= iofs.ModeDevice | iofs.ModeCharDevice
	case unix.S_IFBLK:
		m |= iofs.ModeDevice
	}
	if i.st.Mode&unix.S_ISUID != 0 {
		m |= iofs.ModeSetuid
	}
	if i.st.Mode&unix.S_ISGID != 0 {
		m |= iofs.ModeSetgid
	}
	if i.st.Mode&unix.S_ISVTX != 0 {
		m |= iofs.ModeSticky
	}
	return m
}
