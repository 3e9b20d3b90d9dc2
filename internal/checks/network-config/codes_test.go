package networkconfig

import (
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

// TestFixesStandAlone: every fix is a whole sentence an operator can
// follow without the rest of the report.
func TestFixesStandAlone(t *testing.T) {
	for _, c := range Codes {
		for _, f := range c.Fixes() {
			if f[:1] != strings.ToUpper(f[:1]) || !strings.HasSuffix(f, ".") {
				t.Errorf("%s: fix %q is not a sentence", c.ID, f)
			}
			for _, bad := range []string{"as above", "see above", "same.", "see the message", "unblock it"} {
				if strings.Contains(strings.ToLower(f), bad) {
					t.Errorf("%s: fix %q leans on %q", c.ID, f, bad)
				}
			}
		}
	}
}

// TestUnreadableFix: root is told what denies it the files, anyone else
// to run as root; both are the code's own fixes.
func TestUnreadableFix(t *testing.T) {
	files := []string{"/etc/netplan/50-cloud-init.yaml", "/etc/NetworkManager/system-connections/a.nmconnection"}
	for _, isRoot := range []bool{false, true} {
		fs := JudgeIntentFiles(IntentRead{Unreadable: files, IsRoot: isRoot})
		checktest.Conventions(t, fs, Codes)
		f := checktest.Want(t, fs, CodeNCUnreadable.ID, runner.Error)
		if got := strings.Contains(f.Remediation, files[1]); got != isRoot {
			t.Errorf("root %v: remediation %q", isRoot, f.Remediation)
		}
	}
}
