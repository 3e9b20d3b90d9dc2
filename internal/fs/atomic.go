package fs

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to the host path name through a temporary
// file in the same directory, fsynced and renamed over the target, so a
// reader sees the old or the new content and never a torn file. It refuses
// to replace anything but a regular file.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) (err error) {
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("write %s: not a regular file", name)
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
