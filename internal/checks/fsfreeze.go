package checks

import (
	"github.com/guestcheck/guestcheck/internal/check"
	"github.com/guestcheck/guestcheck/internal/guestagent"
)

// FSFreeze emulates the freeze list qemu-ga builds for
// guest-fsfreeze-freeze and judges every mount in it. It never freezes
// anything unless Env.FreezeTest asks for the active test of
// --freeze-test. The logic lives in internal/guestagent, beside the agent
// probe it shares; docs/checks/fs-freeze.md explains each code.
var FSFreeze = check.Check{
	ID:          "fs-freeze",
	Title:       "filesystem freeze capability",
	Description: "an agent and its channel exist to freeze for snapshots, and every filesystem qemu-ga freezes can be frozen in a safe order (and, with --freeze-test, a real freeze and thaw)",
	Codes:       guestagent.FSFreezeCodes,
	Run:         guestagent.RunFSFreeze,
}
