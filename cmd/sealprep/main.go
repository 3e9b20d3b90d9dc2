// Command sealprep prepares a VM, or a mounted image root, to become a
// template: it clears machine-id, SSH host keys, cloud-init state and the
// rest of the per-instance identity so that every clone boots as a new
// machine. It plans first, applies through one executor, and verifies.
package main

import (
	"context"
	"io"
	"os"

	"github.com/guestcheck/guestcheck/internal/host/appliance"
	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/shared/tty"
)

func main() {
	if appliance.IsInit() {
		applianceInit() // never returns: the appliance powers off
	}
	live := &seal.SystemLive{}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, env{
		all:        seal.All,
		live:       live,
		powerOff:   live.PowerOff,
		hostRead:   os.ReadFile,
		isTerminal: func(r io.Reader) bool { return tty.Is(r) },
		termWidth:  termWidth,
		booted:     func() bool { st, err := os.Lstat("/run/systemd/system"); return err == nil && st.IsDir() },
		ctx:        context.Background(),
		// Tests point --image sessions elsewhere, so they never meet the
		// host's own.
		imageStateDir: os.Getenv("SEALPREP_STATE_DIR"),
	}))
}

// termWidth is the width of the terminal w is, 80 when the terminal does
// not say (a serial console), or 0 when w is no terminal or TERM=dumb
// (which cannot clear to the end of a line).
func termWidth(w io.Writer) int {
	if !tty.Is(w) || os.Getenv("TERM") == "dumb" {
		return 0
	}
	if n := tty.Width(w); n > 0 {
		return n
	}
	return 80
}
