package checks

import (
	intent "github.com/guestcheck/guestcheck/internal/checks/cloud-config"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// CloudConfig compares what the instance's user-data asked cloud-init for
// (users, keys, sudo, ssh_pwauth, packages, write_files, runcmd and more)
// with the system it produced, and validates the user-data against the
// guest's own cloud-init schema. The logic lives in
// internal/checks/cloud-config; docs/checks/cloud-config.md explains each code.
var CloudConfig = runner.Check{
	ID:          "cloud-config",
	Title:       "cloud-config applied",
	Description: "what user-data asked cloud-init for is what the system has, and user-data is valid under the installed cloud-init's schema",
	Codes:       intent.Codes,
	Run:         intent.Run,
}
