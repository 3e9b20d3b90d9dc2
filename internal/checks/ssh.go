package checks

import (
	sshcheck "github.com/guestcheck/guestcheck/internal/checks/ssh"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// SSH checks that sshd is installed, enabled, active and listening where
// its configuration says, that its host keys are sound and were generated
// for this instance, and that the effective authentication settings meet
// the baseline. The logic lives in internal/checks/ssh; docs/checks/ssh.md
// explains each code.
var SSH = runner.Check{
	ID:    "ssh",
	Title: "SSH server, host keys and authentication settings",
	Description: "sshd is installed, enabled, active and listening on its configured addresses; host keys exist, parse, " +
		"match, have accepted modes and are newer than the instance; password and root login meet ssh.baseline",
	Codes: sshcheck.Codes,
	Run:   sshcheck.Run,
}
