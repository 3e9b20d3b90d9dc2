package netroute

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/check/checktest"
	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/netstate/nstest"
)

// The helpers every test of the package shares: fake guest roots, a live
// Env, and the rules every finding is held to.

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

func openRoot(t testing.TB, dir string) *fs.Root {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// liveEnv is a live environment whose kernel is the namespace ns (nil for
// checks that never reach the kernel) and whose files are root.
func liveEnv(root *fs.Root, ns *nstest.NS, cfg *config.Config) *check.Env {
	if cfg == nil {
		cfg = config.Default()
	}
	env := &check.Env{Root: root, Live: true, Config: cfg, Now: time.Now, IsRoot: os.Geteuid() == 0}
	if ns != nil {
		env.Netlink = ns.Handle
	}
	return env
}

// assertConventions holds findings to the project's rules.
func assertConventions(t *testing.T, fs []check.Finding, codes []string) {
	t.Helper()
	checktest.Conventions(t, fs, codes)
}

func codesOf(fs []check.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Status)+" "+f.Code)
	}
	return out
}

func find(fs []check.Finding, code string) *check.Finding {
	for i := range fs {
		if fs[i].Code == code {
			return &fs[i]
		}
	}
	return nil
}

// mustFind is find for a finding the test cannot go on without.
func mustFind(t *testing.T, fs []check.Finding, code string) check.Finding {
	t.Helper()
	f := find(fs, code)
	if f == nil {
		t.Fatalf("no %s finding in %v", code, codesOf(fs))
	}
	return *f
}
