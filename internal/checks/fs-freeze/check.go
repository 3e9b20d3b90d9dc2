package fsfreeze

import (
	"errors"

	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Check emulates the freeze list qemu-ga builds for guest-fsfreeze-freeze
// and judges every mount in it. It never freezes anything unless
// Env.FreezeTest asks for the active test of --freeze-test. The agent
// presence it shares with qemu-guest-agent is internal/fact/agent;
// docs/checks/fs-freeze.md explains each code.
var Check = runner.Check{
	ID:    "fs-freeze",
	Title: "Filesystem freeze capability",
	Description: "an agent and its channel exist to freeze the guest for snapshots, and every filesystem qemu-ga freezes " +
		"can be frozen in a safe order (with --freeze-test, by a real freeze and thaw)",
	Codes: Codes,
	Run:   Run,
}

// FreezeTestFor is the --freeze-test request to freeze and thaw the
// filesystem at mountpoint in a run of selected. Only this check acts on
// it, so selected must hold it; protect lists the paths (the report's
// outputs) whose filesystem must never be frozen.
func FreezeTestFor(selected []runner.Check, mountpoint string, protect []string) (*runner.FreezeTest, error) {
	if !runner.Has(selected, Check.ID) {
		return nil, errors.New("--freeze-test needs the fs-freeze check, which --only, --skip or the config left out")
	}
	return &runner.FreezeTest{Mountpoint: mountpoint, Protect: protect}, nil
}
