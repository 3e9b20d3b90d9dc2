package qemuguestagent

import (
	"github.com/guestcheck/guestcheck/internal/fact/agent"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Probe returns env's agent presence, read once per run and shared with
// the fs-freeze check (agent.Detect).
func Probe(env *runner.Env) *agent.Presence { return agent.Detect(env.Facts, env.Root, env.Live) }

// portOf returns the guest-agent port, nil when the VM has none.
func portOf(p *agent.Presence) *port {
	if p.Port == "" {
		return nil
	}
	return &port{dev: p.Port, link: p.Link}
}
