package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSkipIsRecorded runs a subtest that skips and requires one clean line
// in the skip log, which make test's summary reads.
func TestSkipIsRecorded(t *testing.T) {
	log := filepath.Join(t.TempDir(), "skips")
	t.Setenv(SkipLogEnv, log)
	t.Run("sub", func(t *testing.T) { Skip(t, "tool:x", "x not found:\tinstall\nit") })
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tool:x\tTestSkipIsRecorded/sub\tx not found: install it\n"; string(b) != want {
		t.Errorf("skip log = %q, want %q", b, want)
	}
}

// TestLookFindsSbin: tools in /usr/sbin are found even when PATH lacks it.
func TestLookFindsSbin(t *testing.T) {
	t.Setenv("PATH", "/nonexistent")
	if _, ok := Look("sh"); !ok {
		t.Error("Look(sh) found nothing outside PATH")
	}
	if _, ok := Look("no-such-tool-guestcheck"); ok {
		t.Error("Look found a tool that does not exist")
	}
}
