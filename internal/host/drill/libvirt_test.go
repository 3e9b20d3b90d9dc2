package drill

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/fleet/fleettest"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
)

// startLibvirtd is a fake libvirtd with one running domain, name, that
// passes each agent command to a, as libvirtd passes it to qemu-ga.
func startLibvirtd(t *testing.T, name string, a *qgafake.Agent) *fleettest.Libvirtd {
	xml := fmt.Sprintf("<domain type='qemu' id='1'><name>%s</name><devices><channel type='unix'><source mode='bind' path='/run/x'/><target type='virtio' name='org.qemu.guest_agent.0' state='connected'/></channel></devices></domain>", name)
	return fleettest.StartLibvirtd(t, &fleettest.Libvirtd{
		Domains: []fleettest.Domain{{Name: name, XML: xml}},
		Agent:   func(_, cmd string) fleettest.AgentReply { return fleettest.AgentReply{Reply: agentLine(a, cmd)} },
	})
}

// agentLine runs one command on a, over a connection of its own, and
// returns its reply line as libvirtd does.
func agentLine(a *qgafake.Agent, req string) string {
	c, s := net.Pipe()
	defer c.Close()
	go a.Serve(s)
	c.SetDeadline(time.Now().Add(time.Minute))
	io.WriteString(c, req+"\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line)
}

// libvirtTarget is the domain as the command line finds it.
func libvirtTarget(t *testing.T, f *fleettest.Libvirtd) Target {
	t.Helper()
	ts, err := fleet.NewLibvirtSource(f.URI()).Targets(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Dial == nil {
		t.Fatalf("the fake libvirtd's domains: %+v %v", ts, err)
	}
	return Target{Target: ts[0], Reach: Reach{Libvirt: f.URI(), Domain: f.Domains[0].Name}}
}

// TestLibvirtDrill drills a domain through libvirt's agent passthrough:
// a healthy drill, then a freeze that outlasts the drill, which its
// guard thaws by listing the domain again on a libvirt connection of its
// own.
func TestLibvirtDrill(t *testing.T) {
	a, g := healthy(t, "/data,/")
	f := startLibvirtd(t, "db1", a)
	r := Run(context.Background(), []Target{libvirtTarget(t, f)}, nil, Options{Deadline: 5 * time.Second, Exe: osArgs0()})
	vm := r.VMs[0]
	if vm.Status != Pass || vm.Source != "libvirt" || vm.FrozenCount != 2 || vm.ThawedBy != "drill" || vm.Hook.State != HookRan || vm.Prediction.State != Agree {
		t.Fatalf("%+v", vm)
	}
	g.FreezeTakes = 2 * time.Second
	r = Run(context.Background(), []Target{libvirtTarget(t, f)}, nil, Options{Deadline: time.Second, VMTimeout: 800 * time.Millisecond, Exe: osArgs0()})
	vm = r.VMs[0]
	if vm.Status != Fail || vm.ThawedBy != "guard" {
		t.Fatalf("%+v", vm)
	}
	if g.Frozen() || g.Thaws() != 2 {
		t.Errorf("frozen %v, %d thaws", g.Frozen(), g.Thaws())
	}
}
