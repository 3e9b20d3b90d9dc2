package tty

import (
	"bytes"
	"os"
	"testing"

	"github.com/guestcheck/guestcheck/internal/shared/tty/ttytest"
)

func TestIs(t *testing.T) {
	if Is(&bytes.Buffer{}) {
		t.Error("a buffer is not a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Is(f) {
		t.Error("a regular file is not a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Is(r) {
		t.Error("a pipe is not a terminal")
	}
}

func TestPseudoTerminal(t *testing.T) {
	ctl, term := ttytest.Open(t, 80, 24)
	if !Is(term) {
		t.Error("the terminal end of a pty is a terminal")
	}
	if w := Width(term); w != 80 {
		t.Errorf("width %d, want 80", w)
	}
	if Width(&bytes.Buffer{}) != 0 {
		t.Error("a buffer has no width")
	}
	done := make(chan []byte)
	go func() {
		b, err := ttytest.ReadAll(ctl)
		if err != nil {
			t.Error(err)
		}
		done <- b
	}()
	if _, err := term.WriteString("a\rb\n"); err != nil {
		t.Fatal(err)
	}
	term.Close()
	if got := string(<-done); got != "a\rb\n" {
		t.Errorf("read %q: want the bytes unchanged", got)
	}
}
