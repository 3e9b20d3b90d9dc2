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

// TestPrivsepDir holds the protocol of SshdPrivsepDir on a directory of
// the test's own: a made directory lasts as long as any holder and goes
// with the last one; one that was there before stays.
func TestPrivsepDir(t *testing.T) {
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	t.Run("made, then removed by the last holder", func(t *testing.T) {
		lockDir := t.TempDir()
		dir := filepath.Join(lockDir, "sshd")
		t.Run("first holder", func(t *testing.T) {
			privsepDir(t, lockDir, dir)
			if !exists(dir) {
				t.Fatal("not made")
			}
			t.Run("second holder", func(t *testing.T) { privsepDir(t, lockDir, dir) })
			if !exists(dir) {
				t.Fatal("removed while the first holder still needs it")
			}
		})
		if exists(dir) {
			t.Error("left behind after the last holder")
		}
	})
	t.Run("there before", func(t *testing.T) {
		lockDir := t.TempDir()
		dir := filepath.Join(lockDir, "sshd")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Run("holder", func(t *testing.T) { privsepDir(t, lockDir, dir) })
		if !exists(dir) {
			t.Error("removed a directory the test did not make")
		}
	})
}

func TestNotProse(t *testing.T) {
	for _, text := range []string{
		"Detail evidence (the rules of step 2) and why_EVIDENCE for each.",
		"The message names the seal and ssh-host-keys not run.",
		"Set {{.Name}} here; TODO.",
		"Returned by check.New.",
		"See HostKeysRemoved.",
		"A MACHINE_ID_PATH placeholder.",
	} {
		if len(NotProse(text, map[string]bool{"HostKeysRemoved": true})) == 0 {
			t.Errorf("%q passes as prose", text)
		}
	}
	for _, text := range []string{
		"Raise checks.ID.timeout, or set checks: {ssh: {enabled: false}}.",
		"Move BLOCK_RPCS where the agent reads it; 97 % full; `journalctl -b _PID=1`.",
		"The template was sealed without sealprep's ssh-host-keys operation; PasswordAuthentication is on.",
	} {
		if p := NotProse(text, map[string]bool{"HostKeysRemoved": true}); len(p) != 0 {
			t.Errorf("%q: %v", text, p)
		}
	}
}
