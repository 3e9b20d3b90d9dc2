// Package ttytest opens pseudo-terminals for tests of terminal output, so
// that a test sees what a person on a console would see.
package ttytest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Open returns the controlling end (read what was written) and the
// terminal end (give it to the code under test) of a new pseudo-terminal
// of cols x rows. Output post-processing is off, so the controller reads
// exactly the bytes written ("\n" is not turned into "\r\n"). Both ends
// are closed when tb ends.
func Open(tb testing.TB, cols, rows int) (ctl, term *os.File) {
	tb.Helper()
	ctl, term, err := open(cols, rows)
	if err != nil {
		tb.Fatalf("no pseudo-terminal for the test: %v", err)
	}
	tb.Cleanup(func() {
		term.Close()
		ctl.Close()
	})
	return ctl, term
}

func open(cols, rows int) (ctl, term *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	ctl = os.NewFile(uintptr(fd), "/dev/ptmx")
	fail := func(e error) (*os.File, *os.File, error) {
		ctl.Close()
		return nil, nil, e
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail(fmt.Errorf("unlock pty: %w", err))
	}
	// TIOCGPTPEER opens the terminal end without a /dev/pts path (which a
	// container's devpts may not show); older kernels fall back to it.
	tfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		if err != nil {
			return fail(fmt.Errorf("pty number: %w", err))
		}
		name := fmt.Sprintf("/dev/pts/%d", n)
		t, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fail(fmt.Errorf("open %s: %w", name, err))
		}
		tfd = uintptr(t)
	}
	term = os.NewFile(tfd, "pty")
	tio, err := unix.IoctlGetTermios(int(tfd), unix.TCGETS)
	if err == nil {
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ICANON
		err = unix.IoctlSetTermios(int(tfd), unix.TCSETS, tio)
	}
	if err == nil {
		err = unix.IoctlSetWinsize(int(tfd), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)})
	}
	if err != nil {
		term.Close()
		return fail(fmt.Errorf("set up pty: %w", err))
	}
	return ctl, term, nil
}

// ReadAll reads ctl until every holder of the terminal end has closed it
// (the kernel then answers EIO, which is the end here, not an error).
// Run it in its own goroutine while the code under test writes: a full
// pseudo-terminal buffer blocks the writer.
func ReadAll(ctl *os.File) ([]byte, error) {
	b, err := io.ReadAll(ctl)
	if errors.Is(err, syscall.EIO) {
		err = nil
	}
	return b, err
}
