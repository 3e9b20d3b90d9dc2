package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteReport writes a report file on the host: its missing parent
// directories first (mode 0755, as /run/guestcheck is on a fresh guest),
// then the file through WriteFileAtomic. The error is one line naming the
// cause (the temporary file's name means nothing to an operator).
func WriteReport(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return cause(err)
	}
	return cause(WriteFileAtomic(name, data, 0o644))
}

// cause strips path wrappers down to one "path: system error" (such as
// "/run/x: permission denied"), naming the directory instead of the
// temporary file, whose name means nothing to an operator.
func cause(err error) error {
	if err == nil {
		return nil
	}
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return err
	}
	p := pe.Path
	if b := filepath.Base(p); strings.HasPrefix(b, ".") && strings.Contains(b, ".tmp") {
		p = filepath.Dir(p)
	}
	return fmt.Errorf("%s: %w", p, pe.Err)
}

// WriteFileAtomic writes data to the host path name through a temporary
// file in the same directory, fsynced and renamed over the target, so a
// reader sees the old or the new content and never a torn file. It refuses
// to replace anything but a regular file.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) (err error) {
	if st, err := os.Lstat(name); err == nil && st.IsDir() {
		return fmt.Errorf("%s: a directory; give a file name", name)
	} else if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file, and only a regular file is replaced; give another file name", name)
	}
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = os.Rename(tmp, name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// Persist the rename itself.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
