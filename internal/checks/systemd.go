package checks

import (
	systemdcheck "github.com/guestcheck/guestcheck/internal/checks/systemd"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Systemd checks the system state as is-system-running reports it, each
// failed unit, that the boot finished with no stuck job, the boot time
// against systemd.boot_budget and ordering cycles. The logic lives in
// internal/checks/systemd; docs/checks/systemd.md explains each code.
var Systemd = runner.Check{
	ID:    "systemd",
	Title: "systemd state, failed units and boot time",
	Description: "the system is running (not degraded: each failed unit with its result), the boot finished with no stuck job, " +
		"boot time within systemd.boot_budget with the critical chain, no ordering cycle",
	Codes: systemdcheck.Codes,
	Run:   systemdcheck.Run,
}
