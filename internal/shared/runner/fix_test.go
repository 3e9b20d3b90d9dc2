package runner

import (
	iofs "io/fs"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestFix(t *testing.T) {
	if got := Fix(true, "run `hostnamectl set-hostname NAME`", "write /etc/hostname in the image"); !strings.Contains(got, "hostnamectl") {
		t.Errorf("live fix = %q", got)
	}
	e := &Env{Live: false}
	if got := e.Fix("run `hostnamectl set-hostname NAME`", "write /etc/hostname in the image"); got != "write /etc/hostname in the image" {
		t.Errorf("image fix = %q", got)
	}
}

// TestShellWord: a path a fix names is pasted back as the same word.
func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{"/mnt/image": "/mnt/image", "/mnt/my image": "'/mnt/my image'", "/mnt/it's": `'/mnt/it'\''s'`, "": "''", "/a;rm": "'/a;rm'"} {
		if got := ShellWord(in); got != want {
			t.Errorf("ShellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestReadFix holds the unreadable-file fix to the error and to who runs
// guestcheck: "run as root" only for a user who is not root.
func TestReadFix(t *testing.T) {
	denied := &os.PathError{Op: "open", Path: "/etc/shadow", Err: syscall.EACCES}
	for _, tc := range []struct {
		root bool
		err  error
		want string
	}{
		{false, denied, "Run guestcheck as root, or make /etc/shadow readable"},
		{true, denied, "Permission denied even to root: check the mode and owner of /etc/shadow, an SELinux or AppArmor denial (the audit log), or a FUSE or NFS root that squashes root"},
		{true, &os.PathError{Op: "open", Path: "/etc/shadow", Err: syscall.EPERM}, "Permission denied even to root: check the mode and owner of /etc/shadow, an SELinux or AppArmor denial (the audit log), or a FUSE or NFS root that squashes root"},
		{false, &os.PathError{Op: "open", Path: "/etc/shadow", Err: iofs.ErrNotExist}, "Restore /etc/shadow"},
		{true, &os.PathError{Op: "read", Path: "/etc/shadow", Err: syscall.EISDIR}, "Repair or restore /etc/shadow"},
	} {
		got := ReadFix(tc.root, "/etc/shadow", tc.err)
		if got != tc.want {
			t.Errorf("ReadFix(root=%v, %v) = %q, want %q", tc.root, tc.err, got, tc.want)
		}
		if tc.root && strings.Contains(strings.ToLower(got), "as root") {
			t.Errorf("as root the fix asks to run as root: %q", got)
		}
	}
}
