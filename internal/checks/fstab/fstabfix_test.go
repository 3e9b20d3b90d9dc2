package fstab

import (
	"errors"
	iofs "io/fs"
	"strings"
	"testing"
)

// TestUnreadableFix: each way /etc/fstab can fail to read gets its own
// wording, and each is one of the code's fixes: "run as root" only for a
// user who is not root.
func TestUnreadableFix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		isRoot bool
		err    error
		want   string
	}{
		{false, iofs.ErrPermission, "Run guestcheck as root"},
		{true, iofs.ErrPermission, "SELinux or AppArmor"},
		{true, errors.New("input/output error"), "(input/output error)"},
	} {
		got := unreadableFix(tc.isRoot, tc.err)
		if !strings.Contains(got, tc.want) || !codeFstabUnreadable.Matches(got) {
			t.Errorf("unreadableFix(%v, %v) = %q, want one of the code's fixes with %q", tc.isRoot, tc.err, got, tc.want)
		}
	}
}
