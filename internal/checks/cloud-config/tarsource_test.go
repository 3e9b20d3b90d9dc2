package cloudconfig

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// tarSource serves a captured guest root (root.tar.gz, made with
// --numeric-owner) with its owners, modes and times, so captures keep
// ownership without root in the tests. With asUser it refuses to read
// files that others may not read, as the kernel refuses a non-root user.
type tarSource struct {
	ents   map[string]*tarEnt
	asUser bool
}

type tarEnt struct {
	hdr  *tar.Header
	data []byte
}

func loadTar(t testing.TB, file string) *tarSource {
	t.Helper()
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	s := &tarSource{ents: map[string]*tarEnt{}}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := path.Clean("/" + strings.TrimPrefix(h.Name, "./"))
		b, _ := io.ReadAll(tr)
		s.ents[p] = &tarEnt{hdr: h, data: b}
	}
	return s
}

// resolve follows symlinks inside the root (chroot semantics).
func (s *tarSource) resolve(p string, follow bool, depth int) (string, *tarEnt, error) {
	if depth > 40 {
		return "", nil, syscall.ELOOP
	}
	p = path.Clean("/" + p)
	if p == "/" {
		return p, &tarEnt{hdr: &tar.Header{Typeflag: tar.TypeDir, Mode: 0o755}}, nil
	}
	dir, base := path.Split(p)
	rd, de, err := s.resolve(path.Clean(dir), true, depth+1)
	if err != nil {
		return "", nil, err
	}
	if de.hdr.Typeflag != tar.TypeDir {
		return "", nil, syscall.ENOTDIR
	}
	full := path.Join(rd, base)
	e, ok := s.ents[full]
	if !ok {
		if s.isDir(full) {
			return full, &tarEnt{hdr: &tar.Header{Typeflag: tar.TypeDir, Mode: 0o755}}, nil
		}
		return "", nil, iofs.ErrNotExist
	}
	if e.hdr.Typeflag == tar.TypeSymlink && follow {
		target := e.hdr.Linkname
		if !strings.HasPrefix(target, "/") {
			target = path.Join(rd, target)
		}
		return s.resolve(target, true, depth+1)
	}
	return full, e, nil
}

func (s *tarSource) isDir(p string) bool {
	for k := range s.ents {
		if strings.HasPrefix(k, p+"/") {
			return true
		}
	}
	return false
}

func (s *tarSource) info(e *tarEnt) Info {
	h := e.hdr
	m := iofs.FileMode(h.Mode & 0o777)
	if h.Mode&0o4000 != 0 {
		m |= iofs.ModeSetuid
	}
	if h.Mode&0o2000 != 0 {
		m |= iofs.ModeSetgid
	}
	if h.Mode&0o1000 != 0 {
		m |= iofs.ModeSticky
	}
	switch h.Typeflag {
	case tar.TypeDir:
		m |= iofs.ModeDir
	case tar.TypeSymlink:
		m |= iofs.ModeSymlink
	}
	return Info{Mode: m, UID: h.Uid, GID: h.Gid, ModTime: h.ModTime, Size: int64(len(e.data))}
}

func (s *tarSource) ReadFile(p string) ([]byte, error) {
	_, e, err := s.resolve(p, true, 0)
	if err != nil {
		return nil, &iofs.PathError{Op: "open", Path: p, Err: err}
	}
	if e.hdr.Typeflag == tar.TypeDir {
		return nil, &iofs.PathError{Op: "read", Path: p, Err: syscall.EISDIR}
	}
	if s.asUser && e.hdr.Mode&0o004 == 0 {
		return nil, &iofs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
	}
	return e.data, nil
}

func (s *tarSource) Stat(p string) (Info, error) {
	_, e, err := s.resolve(p, true, 0)
	if err != nil {
		return Info{}, &iofs.PathError{Op: "stat", Path: p, Err: err}
	}
	return s.info(e), nil
}

func (s *tarSource) Lstat(p string) (Info, error) {
	_, e, err := s.resolve(p, false, 0)
	if err != nil {
		return Info{}, &iofs.PathError{Op: "lstat", Path: p, Err: err}
	}
	return s.info(e), nil
}

func (s *tarSource) Readlink(p string) (string, error) {
	_, e, err := s.resolve(p, false, 0)
	if err != nil {
		return "", err
	}
	if e.hdr.Typeflag != tar.TypeSymlink {
		return "", errors.New("not a symlink")
	}
	return e.hdr.Linkname, nil
}

func (s *tarSource) ReadDirNames(p string) ([]string, error) {
	rp, e, err := s.resolve(p, true, 0)
	if err != nil {
		return nil, err
	}
	if e.hdr.Typeflag != tar.TypeDir {
		return nil, syscall.ENOTDIR
	}
	seen := map[string]bool{}
	for k := range s.ents {
		if strings.HasPrefix(k, rp+"/") || rp == "/" {
			rest := strings.TrimPrefix(strings.TrimPrefix(k, rp), "/")
			if n, _, _ := strings.Cut(rest, "/"); n != "" {
				seen[n] = true
			}
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

func (s *tarSource) Glob(pattern string) ([]string, error) { return glob(s, pattern) }

func (s *tarSource) Display(p string) string { return p }

// put adds or replaces a file, for synthetic variations of a capture.
func (s *tarSource) put(p string, mode int64, uid int, data string) {
	s.ents[p] = &tarEnt{hdr: &tar.Header{Typeflag: tar.TypeReg, Mode: mode, Uid: uid, Gid: uid}, data: []byte(data)}
}
