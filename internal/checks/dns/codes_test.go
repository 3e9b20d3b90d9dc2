package dns

import (
	"errors"
	iofs "io/fs"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/shared/runner/checktest"
)

// TestReadFix: each way resolv.conf can be unreadable gets a fix of the
// code's own, with the path filled in.
func TestReadFix(t *testing.T) {
	for _, tc := range []struct {
		isRoot bool
		err    error
		want   string
	}{
		{false, iofs.ErrPermission, "Run guestcheck as root, or make /etc/resolv.conf readable."},
		{true, iofs.ErrPermission, "Find what denies root access to /etc/resolv.conf:"},
		{true, errors.New("too many levels of symbolic links"), "Repair /etc/resolv.conf:"},
	} {
		got := readFix(CodeDNSConfigUnreadable, tc.isRoot, "/etc/resolv.conf", tc.err)
		if len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
			t.Errorf("readFix(%v, %v) = %q, want it to start %q", tc.isRoot, tc.err, got, tc.want)
		}
		checktest.Conventions(t, []runner.Finding{CodeDNSConfigUnreadable.New(runner.Error, "cannot read /etc/resolv.conf", nil, got)}, Codes)
	}
}

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
