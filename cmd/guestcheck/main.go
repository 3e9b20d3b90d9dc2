// Command guestcheck verifies that a Linux VM was delivered correctly:
// hostname, cloud-init and the rest of the checks listed by --list. It only
// reads; every finding says what is wrong, why it matters and how to fix it.
package main

import (
	"os"

	"github.com/guestcheck/guestcheck/internal/checks"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, checks.All))
}
