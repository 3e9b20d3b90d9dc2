// Command sealprep prepares a VM or a mounted image root to become a
// template by clearing its per-instance identity. It is not implemented
// yet; it exits 3 so that no pipeline mistakes it for a successful seal.
package main

import (
	"fmt"
	"os"

	"github.com/guestcheck/guestcheck/internal/buildinfo"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "--version" || os.Args[1] == "version") {
		fmt.Printf("sealprep %s\n", buildinfo.Version)
		return
	}
	fmt.Fprintln(os.Stderr, "sealprep: not yet implemented")
	os.Exit(3)
}
