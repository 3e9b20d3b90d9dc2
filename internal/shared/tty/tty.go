// Package tty answers, for both commands, whether a stream is a terminal
// and how wide it is: guestcheck uses it for colour, sealprep for its
// confirmation prompt and its progress line.
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

// Width is the column count of the terminal v is open on, or 0 when v is
// not a terminal or the terminal does not know its size (serial consoles
// often report 0).
func Width(v any) int {
	f, ok := v.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
