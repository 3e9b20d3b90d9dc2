// Command guestcheck verifies that a Linux VM was delivered correctly:
// hostname, cloud-init and the rest of the checks listed by --list. It only
// reads; every finding says what is wrong, why it matters and how to fix it.
package main

import (
	"os"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/fact/freeze"
	"github.com/guestcheck/guestcheck/internal/host/drill"
)

func main() {
	// --freeze-test re-executes this binary as its thaw watchdog; that
	// process must do nothing else.
	if freeze.IsWatchdog() {
		os.Exit(freeze.RunWatchdog())
	}
	// freeze-drill re-executes it as the guard that thaws a drilled VM.
	if drill.IsGuard() {
		os.Exit(drill.RunGuard())
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, checks.All))
}
