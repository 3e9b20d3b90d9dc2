//go:build vmtest

package vm

import (
	"os"
	"testing"
)

// TestVMRootfs builds (or finds cached) the Debian root filesystems every
// scenario starts from, both at once: mmdebstrap waits on the mirror and
// on dpkg more than on the CPU, so .ci/run starts this in the background
// while the unit tests run, and the scenarios then find them cached. It
// needs no guestcheck package.
func TestVMRootfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the VM tests need root: run `make vm-test` as root")
	}
	ctx, cancel := testContext(t)
	defer cancel()
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	// The group returns only when both parallel builds have ended, so the
	// deferred cancel cannot stop them early.
	t.Run("build", func(t *testing.T) {
		t.Run("debian12", func(t *testing.T) { t.Parallel(); buildRootfs(ctx, t, cacheDir()) })
		// Only TestVMNetIntent, a long scenario, boots these.
		t.Run("network-stacks", func(t *testing.T) { longScenario(t); t.Parallel(); netRootfs(ctx, t, cacheDir()) })
	})
}
