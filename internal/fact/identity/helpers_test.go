package identity

import (
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netstate/nstest"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// writeHost writes one file (or "->target" symlink) under root.
func writeHost(t testing.TB, root, p, content string) {
	t.Helper()
	testenv.WriteFiles(t, root, map[string]string{p: content})
}

// openRoot opens a test tree as a guest root, closed when the test ends.
var openRoot = nstest.OpenRoot

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
