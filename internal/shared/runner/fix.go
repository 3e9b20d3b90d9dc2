package runner

import (
	"errors"
	iofs "io/fs"
	"strings"
)

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

// IsPermission reports whether err is a permission error (EACCES, EPERM).
func IsPermission(err error) bool { return errors.Is(err, iofs.ErrPermission) }
