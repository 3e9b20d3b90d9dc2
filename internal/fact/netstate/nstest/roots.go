package nstest

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// WriteRoot creates a guest root under t.TempDir from path -> content;
// a content starting with "->" makes a symlink to the rest.
func WriteRoot(t testing.TB, files map[string]string) *fs.Root {
	t.Helper()
	dir := testenv.WriteTree(t, files)
	return OpenRoot(t, dir)
}

// OpenRoot opens dir as a guest root for the test's lifetime.
func OpenRoot(t testing.TB, dir string) *fs.Root {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
