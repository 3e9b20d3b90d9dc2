package nstest

import (
	"os"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/shared/config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
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

// LiveEnv is a live environment whose kernel is the namespace ns (nil for
// checks that never reach the kernel) and whose files are root.
func LiveEnv(root *fs.Root, ns *NS, cfg *config.Config) *runner.Env {
	if cfg == nil {
		cfg = config.Default()
	}
	env := &runner.Env{Root: root, Live: true, Config: cfg, Now: time.Now, IsRoot: os.Geteuid() == 0}
	if ns != nil {
		env.Netlink = ns.Handle
	}
	return env
}
