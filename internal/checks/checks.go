// Package checks is guestcheck's registry: one file per check, named after
// its ID, and the ordered list All that the CLI runs and --list shows.
package checks

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// All lists every check in display order. Adding a check means adding its
// file, its test, its line here and its page under docs/checks/.
var All = []runner.Check{
	CloudInit,
	CloudConfig,
	Hostname,
	Routes,
	DNS,
	NetworkIdentity,
	NetworkConfig,
	QemuGuestAgent,
	FSFreeze,
	Fstab,
	DiskSize,
	SSH,
	Systemd,
	TimeSync,
}

// ByID returns the check with the given ID.
func ByID(id string) (runner.Check, bool) {
	for _, c := range All {
		if c.ID == id {
			return c, true
		}
	}
	return runner.Check{}, false
}
