package checks

import (
	"github.com/guestcheck/guestcheck/internal/checks/hostname"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Hostname verifies the VM's name: valid, not a placeholder, persisted in
// /etc/hostname, equal to what cloud-init was asked to set (or to
// hostname.expected), and resolvable to a local address. The logic lives
// in internal/checks/hostname; docs/checks/hostname.md explains each code.
var Hostname = runner.Check{
	ID:    "hostname",
	Title: "Hostname",
	Description: "Kernel hostname is valid, not localhost, persisted in /etc/hostname, " +
		"matches what cloud-init set (or hostname.expected) and resolves to a local address",
	Codes: hostname.Codes,
	Run:   hostname.Run,
}
