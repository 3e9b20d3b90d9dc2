package checks

import (
	guestagent "github.com/guestcheck/guestcheck/internal/checks/qemu-guest-agent"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// QemuGuestAgent checks what a quiesced KubeVirt/Harvester/OpenStack
// snapshot needs from qemu-guest-agent: the virtio channel, the agent
// installed, running and holding the port, an RPC filter that lets freeze
// and KubeVirt's required commands through, no leftover frozen marker,
// working freeze hooks and no SELinux denials. The logic lives in
// internal/checks/qemu-guest-agent; docs/checks/qemu-guest-agent.md explains each code.
var QemuGuestAgent = runner.Check{
	ID:          "qemu-guest-agent",
	Title:       "qemu-guest-agent snapshot readiness",
	Description: "the guest agent's channel, unit, process, RPC filter, frozen marker, freeze hooks and SELinux allow consistent snapshots",
	Codes:       guestagent.Codes,
	Run:         guestagent.Run,
}
