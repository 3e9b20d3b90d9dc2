package identity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fs"
)

// writeTree writes files (guest path: content; "->target" makes a
// symlink) under a new directory and returns it.
func writeTree(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		writeHost(t, dir, p, c)
	}
	return dir
}

func writeHost(t testing.TB, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if target, ok := strings.CutPrefix(content, "->"); ok {
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openRoot(t testing.TB, dir string) *fs.Root {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func openConfined(t testing.TB, dir string) *fs.Confined {
	t.Helper()
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readers opens dir both ways: what guestcheck and sealprep read through.
func readers(t testing.TB, dir string) map[string]fs.Reader {
	return map[string]fs.Reader{"Root": openRoot(t, dir), "Confined": openConfined(t, dir)}
}
