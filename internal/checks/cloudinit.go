package checks

import (
	cloudinit "github.com/guestcheck/guestcheck/internal/checks/cloud-init"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// CloudInit verifies that cloud-init ran on this boot and finished without
// errors, judged as `cloud-init status` does from its files, plus its
// systemd units. The logic lives in internal/checks/cloud-init;
// docs/checks/cloud-init.md explains each code.
var CloudInit = runner.Check{
	ID:    "cloud-init",
	Title: "cloud-init",
	Description: "cloud-init ran this boot and finished without errors, judged from its status.json " +
		"and result.json as `cloud-init status` does, plus its systemd units",
	Codes:   cloudinit.Codes,
	Pending: cloudinit.NotReadyCodes,
	Run:     cloudinit.Run,
}
