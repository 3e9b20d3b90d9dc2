// Package tty answers one question for both commands: is this stream a
// terminal? guestcheck uses it for colour, sealprep for its confirmation
// prompt.
package tty

import (
	"os"

	"golang.org/x/sys/unix"
)

// Is reports whether v is an *os.File open on a terminal (TCGETS succeeds).
func Is(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
