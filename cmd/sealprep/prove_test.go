package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/host/prove"
)

// TestProveProgress: on a terminal one line is rewritten in place, never
// wider than the terminal; anywhere else a line per phase.
func TestProveProgress(t *testing.T) {
	var term bytes.Buffer
	p := proveProgress(&term, env{termWidth: func(io.Writer) int { return 40 }})
	p.Phase("clone-1", "booting")
	p.Phase("clone-2", "waiting for guestcheck's report")
	p.Done()
	out := term.String()
	if strings.Contains(out, "\n") || !strings.HasPrefix(out, "\rprove: clone-1: booting\x1b[K") || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("terminal progress %q", out)
	}
	for _, l := range strings.Split(out, "\r") {
		if w := len([]rune(strings.TrimSuffix(l, "\x1b[K"))); w > 39 {
			t.Errorf("a line of %d columns on a 40-column terminal: %q", w, l)
		}
	}
	var log bytes.Buffer
	p = proveProgress(&log, env{termWidth: func(io.Writer) int { return 0 }})
	if _, ok := p.(prove.LineProgress); !ok {
		t.Fatalf("off a terminal: %T", p)
	}
	p.Phase("clone-1", "booting")
	if log.String() != "prove: clone-1: booting\n" {
		t.Errorf("log progress %q", log.String())
	}
}
