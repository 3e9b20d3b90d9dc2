package networkidentity

import (
	"errors"
	iofs "io/fs"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
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

// TestReadFix: each way the machine-id can be unreadable gets a fix of
// the code's own, with the path filled in.
func TestReadFix(t *testing.T) {
	for _, tc := range []struct {
		isRoot bool
		err    error
		want   string
	}{
		{false, iofs.ErrPermission, "Run guestcheck as root, or give /etc/machine-id mode 0444"},
		{true, iofs.ErrPermission, "Find what denies root access to /etc/machine-id:"},
		{true, errors.New("input/output error"), "Repair /etc/machine-id so that it can be read"},
	} {
		got := readFix(CodeIDMachineIDUnreadable, tc.isRoot, MachineIDPath, tc.err)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("readFix(%v, %v) = %q, want it to start %q", tc.isRoot, tc.err, got, tc.want)
		}
		assertConventions(t, []runner.Finding{CodeIDMachineIDUnreadable.New(runner.Error, "cannot read /etc/machine-id", nil, got)}, Codes)
	}
}
