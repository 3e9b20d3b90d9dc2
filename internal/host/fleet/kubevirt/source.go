package kubevirt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/fleet"
)

// SourceName names the source in fleet's reports.
const SourceName = "kubevirt"

// Source is guestcheck fleet's KubeVirt source: every VM of the cluster
// a kubeconfig reaches, judged on the API alone (KubeVirt has no
// guest-exec to run guestcheck in the guest through).
type Source struct {
	// Kubeconfig is the file (DefaultKubeconfig when empty), Context
	// its context (the current one when empty).
	Kubeconfig, Context string
	// Namespace limits the survey to one namespace; empty is all.
	Namespace string
}

// Name is the source's name in reports.
func (Source) Name() string { return SourceName }

// Targets reads the kubeconfig and lists the cluster's VMs as fleet
// targets named NAMESPACE/NAME.
func (s Source) Targets(ctx context.Context) ([]fleet.Target, error) {
	path := s.Kubeconfig
	if path == "" {
		path = DefaultKubeconfig()
	}
	c, err := LoadKubeconfig(path, s.Context)
	if err != nil && s.Kubeconfig == "" && errors.Is(err, errNoFile) {
		return nil, noKubeconfig(path)
	}
	if err != nil {
		return nil, err
	}
	c.Namespace = s.Namespace
	ms, err := List(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]fleet.Target, 0, len(ms))
	for _, m := range ms {
		out = append(out, Target(m))
	}
	return out, nil
}

// noKubeconfig says where a kubeconfig was looked for, none named, and
// how to name one. In-cluster configuration (a pod's service account) is
// not read: a survey names the cluster it reads.
func noKubeconfig(home string) error {
	where := "$KUBECONFIG is not set"
	if env := os.Getenv("KUBECONFIG"); env != "" {
		where = fmt.Sprintf("no file of $KUBECONFIG (%s) exists", env)
	}
	if home != "" {
		where += ", nor " + home
	}
	return fmt.Errorf("no kubeconfig: %s; name the cluster's with --kubeconfig PATH or $KUBECONFIG", where)
}

// agentCommands are the agent commands a survey in the guest needs
// (guest-exec, guest-exec-status) or that would let one write to the
// guest (guest-file-*), named in the VM's state line when disabled.
var agentCommands = []string{"guest-exec", "guest-exec-status", "guest-file-open", "guest-file-write"}

// Target is one machine as fleet judges it: no Dial, only Known.
func Target(m Machine) fleet.Target {
	id := guestid.Identity{Hostname: m.Hostname, Interfaces: m.Interfaces}
	k := &fleet.Known{Identity: id, Firmware: m.Firmware, State: state(m)}
	if m.Agent != nil {
		k.AgentVersion, k.AgentDisabled = m.Agent.Version, m.Agent.Disabled
	}
	// Each NIC on a network of its own: the API does not say which
	// addresses could meet, and addresses are not compared from it.
	return fleet.Target{Name: m.Namespace + "/" + m.Name, Source: SourceName, Host: m.Node, Known: k}
}

// state is the VM's phase and its guest agent's, in one line.
func state(m Machine) string {
	parts := []string{m.Phase}
	if m.Phase == "" {
		parts[0] = "no status"
	}
	switch a := m.Agent; {
	case a == nil:
	case !a.Connected:
		parts = append(parts, "guest agent not connected")
	case a.Error != "":
		parts = append(parts, "guest agent connected, guestosinfo unreadable: "+a.Error)
	default:
		var off []string
		for _, c := range agentCommands {
			if slices.Contains(a.Disabled, c) {
				off = append(off, c)
			}
		}
		s := "guest agent connected"
		if len(off) > 0 {
			s += " (" + strings.Join(off, ", ") + " disabled)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
