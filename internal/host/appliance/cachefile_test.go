package appliance

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// writeCache and its fallback put the whole content at the path, over a
// stale file of the same name, mode 0600, and leave no other file in the
// cache.
func TestWriteCache(t *testing.T) {
	for name, write := range map[string]func(dir, path string, write func(io.Writer) error) error{"O_TMPFILE": writeCache, "named": writeRenamed} {
		dir := t.TempDir()
		path := filepath.Join(dir, "initramfs-0123.cpio")
		if err := os.WriteFile(path, []byte("stale, and shorter"), 0o644); err != nil {
			t.Fatal(err)
		}
		want := bytes.Repeat([]byte("070701"), 1<<18)
		if err := write(dir, path, func(w io.Writer) error { _, err := w.Write(want); return err }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes (%v), want %d", name, len(got), err, len(want))
		}
		if st, err := os.Stat(path); err != nil {
			t.Error(err)
		} else if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, st.Mode())
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: the cache holds %d files, want only %s", name, len(ents), filepath.Base(path))
		}
		// A write that fails leaves the old file and no other.
		if err := write(dir, path, func(w io.Writer) error { w.Write([]byte("part")); return io.ErrUnexpectedEOF }); err == nil {
			t.Errorf("%s: a failed write was reported as done", name)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Errorf("%s: a failed write replaced the cached file", name)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: a failed write left %d files", name, len(ents))
		}
	}
}
