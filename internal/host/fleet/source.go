// Package fleet is guestcheck's host side: it surveys the VMs on a host
// through their guest agents (guest-exec of the guestcheck inside each),
// and compares their identities to find what clones share, which no
// single guest can see. It only reads: it never writes a guest file and
// runs nothing in a guest but guestcheck's own read-only report.
package fleet

import (
	"context"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// Agent is one open guest-agent connection: a *qga.Client on a chardev
// socket, or libvirt's agent passthrough (virDomainQemuAgentCommand).
type Agent interface {
	qga.Agent
	Close() error
}

// Target is one VM to survey.
type Target struct {
	// Name is the VM's name as the operator knows it: the libvirt domain,
	// the NAME of --agent-socket NAME=PATH, the Proxmox VMID.
	Name string
	// Source is where the target came from: "libvirt", "socket",
	// "proxmox".
	Source string
	// Networks maps a MAC (lower-case, colon-separated) to the network
	// its NIC is on (a libvirt network or bridge name). Addresses are
	// compared only between NICs on one known network; nil when the
	// source cannot say (see Member).
	Networks map[string]string
	// Unreachable, when set, says why the VM cannot be surveyed at all
	// ("no guest agent channel"); the VM is reported unknown with it and
	// Dial is never called.
	Unreachable string
	// Dial opens the agent connection; it must honour ctx's deadline.
	Dial func(ctx context.Context) (Agent, error)
	// Host is the machine the VM runs on when the source is a cluster
	// (KubeVirt: the VMI's node); empty for this host's own VMs.
	Host string
	// Known is what the source's API says of the VM without entering
	// it (KubeVirt). A target with Known and no Dial is not surveyed in
	// the guest: it is judged on Known alone, which is enough to find
	// the identity copies share before they even boot.
	Known *Known
}

// Known is a VM's identity and agent state as a source's API reports
// them, read without guest access.
type Known struct {
	// Identity holds the items the API gives: hostname and MACs.
	Identity guestid.Identity
	// Firmware is the VM's SMBIOS identity from its definition.
	Firmware guestid.Firmware
	// State is one line on the VM's state ("stopped", "running, guest
	// agent connected").
	State string
	// AgentVersion is the guest agent's version, when it reports one.
	AgentVersion string
	// AgentDisabled are the agent commands its RPC filter disables,
	// among those a survey in the guest needs or that write to it.
	AgentDisabled []string
}

// Source lists targets. A source may also have a Name() string method:
// source errors are then reported under that name ("libvirt").
//
// What Dial's Agent returns decides the reasons a VM is unknown with: an
// agent's error reply as *qga.Error, a deadline as an error wrapping
// context.DeadlineExceeded, a connection that went away as one wrapping
// io.EOF, net.ErrClosed, ECONNRESET or EPIPE.
type Source interface {
	// Targets lists the VMs of this source, in a stable order. An error
	// means the source itself could not be read (libvirtd down); a VM
	// that cannot be surveyed is a Target with Unreachable set.
	Targets(ctx context.Context) ([]Target, error)
}
