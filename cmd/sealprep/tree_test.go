package main

import (
	"os"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal/sealtest"
)

// makeTree writes the Debian-like root that the seal package's tests of
// the sequence seal too.
var makeTree = sealtest.MakeTree

// scratch is a temporary directory on tmpfs when there is one (see the
// seal package's scratchDir).
func scratch(tb testing.TB) string {
	tb.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "sealprep-"); err == nil {
			tb.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return tb.TempDir()
}
