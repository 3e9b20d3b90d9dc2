package ssh

import (
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/fact/identity"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// TestJudgeKeyAgeUUIDInstance: on KubeVirt the NoCloud instance-id is the
// firmware UUID, which systemd on KVM makes the machine-id; the host-key
// findings name the instances only by their hash.
func TestJudgeKeyAgeUUIDInstance(t *testing.T) {
	const cur, prev = "4c4c4544-0042-3510-8056-b4c04f4d3232", "5d1e0f3a-9b2c-4d7e-8f10-2a3b4c5d6e7f"
	key := []HostKey{{Path: "/etc/ssh/ssh_host_ed25519_key", ModTime: t0.Add(-time.Hour)}}
	out := JudgeKeyAge(Facts{HostKeys: key, Instance: identity.CloneEvidence{InstanceID: cur, PreviousID: prev, BootTime: t0}})
	validate(t, out)
	f := want(t, out, CodeHostKeyKept, runner.Fail, "predate instance "+identity.ShowInstanceID(cur))
	all := f.Message
	for k, v := range f.Detail {
		all += " " + k + "=" + v
	}
	if strings.Contains(all, "4c4c4544") || strings.Contains(all, "5d1e0f3a") || f.Detail["instance_id_hash"] == "" {
		t.Errorf("a UUID instance-id is shown raw: %+v", f)
	}
}
