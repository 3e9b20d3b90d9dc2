// Package buildinfo carries the version stamped into both binaries at link
// time with -ldflags "-X github.com/guestcheck/guestcheck/internal/buildinfo.Version=...".
package buildinfo

// Version is the release version; "dev" for unstamped builds.
var Version = "dev"
