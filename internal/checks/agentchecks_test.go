package checks

import (
	"context"
	"testing"

	fsfreeze "github.com/guestcheck/guestcheck/internal/checks/fs-freeze"
	qemuguestagent "github.com/guestcheck/guestcheck/internal/checks/qemu-guest-agent"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv/agenttest"
)

// TestAgentChecksAgree runs the qemu-guest-agent and fs-freeze checks
// together on the VM of the issue (agent installed, no channel):
// both fail on the channel, from the one shared probe.
func TestAgentChecksAgree(t *testing.T) {
	env := agenttest.Env(t, "20 1 254:1 / / rw shared:1 - ext4 /dev/vda1 rw\n", map[string]string{
		"/sys/class/virtio-ports/vport2p1/name": ""})
	rs := runner.Run(context.Background(), []runner.Check{qemuguestagent.Check, fsfreeze.Check}, env, runner.RunOptions{})
	if rs[0].Status != runner.Fail || agenttest.Index(rs[0].Findings)["qga-channel-missing"].Status != runner.Fail {
		t.Errorf("qemu-guest-agent: %s %+v", rs[0].Status, rs[0].Findings)
	}
	if rs[1].Status != runner.Fail || agenttest.Index(rs[1].Findings)["fs-freeze-no-channel"].Status != runner.Fail {
		t.Errorf("fs-freeze: %s %+v", rs[1].Status, rs[1].Findings)
	}
}
