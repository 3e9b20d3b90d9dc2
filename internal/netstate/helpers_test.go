package netstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fs"
)

// writeRoot creates a guest root under t.TempDir from path -> content;
// a content starting with "->" makes a symlink to the rest.
func writeRoot(t testing.TB, files map[string]string) *fs.Root {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		hp := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(c, "->"); ok {
			if err := os.Symlink(target, hp); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(hp, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return openRoot(t, dir)
}

// openRoot opens dir as a guest root for the test's lifetime.
func openRoot(t testing.TB, dir string) *fs.Root {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
