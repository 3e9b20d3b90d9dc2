package runner

import (
	"errors"
	iofs "io/fs"
	"strings"
)

// Fix chooses between the two wordings of one remediation, so that each
// check states both in one place. running is the fix on the running
// system, where a command such as systemctl, hostnamectl or blkid acts on
// the guest itself. image is the fix under an image root (--root, or
// sealprep's --image), where that command would act on the host's own
// devices and services instead: it says which file to edit in the image
// (by its guest path), to re-seal with sealprep, or to rebuild. live is
// Env.Live (or the Live a judge's facts carry).
func Fix(live bool, running, image string) string {
	if live {
		return running
	}
	return image
}

// ShellWord is s as one word a POSIX shell reads back as s: unchanged
// when it holds only characters no shell treats specially, else in
// single quotes. A fix that names a path the user gave (--root) quotes
// it with this, so that the command can be pasted as it stands.
func ShellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,=@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Fix is check.Fix for this run's Env.
func (e *Env) Fix(running, image string) string { return Fix(e.Live, running, image) }

// ReadFix words the fix for guest file p that could not be read, by the
// error and by whether guestcheck runs as root (Env.IsRoot). A permission
// error says "run as root" only to a user who is not root: root that is
// denied has a file mode, an LSM policy (SELinux, AppArmor) or a root
// that squashes root (FUSE, NFS) in its way, and rerunning as root would
// change nothing. A missing file is restored, anything else repaired.
func ReadFix(isRoot bool, p string, err error) string {
	switch {
	case errors.Is(err, iofs.ErrPermission) && !isRoot:
		return "Run guestcheck as root, or make " + p + " readable"
	case errors.Is(err, iofs.ErrPermission):
		return PermissionFix(p)
	case errors.Is(err, iofs.ErrNotExist):
		return "Restore " + p
	}
	return "Repair or restore " + p
}

// PermissionFix is the fix for guest files that root itself may not read
// (permission denied although guestcheck runs as root); what names them:
// a guest path, or words such as "the files listed".
func PermissionFix(what string) string {
	return "Permission denied even to root: check the mode and owner of " + what + ", an SELinux or AppArmor denial (the audit log), or a FUSE or NFS root that squashes root"
}

// IsPermission reports whether err is a permission error (EACCES, EPERM).
func IsPermission(err error) bool { return errors.Is(err, iofs.ErrPermission) }
