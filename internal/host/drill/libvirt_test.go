package drill

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/host/qga/qgafake"
)

// fakeLibvirtd speaks enough of libvirt's RPC protocol on a unix socket
// for fleet's libvirt source (auth-list, open, close, list-all-domains,
// get-xml-desc, the QEMU program's agent command; the same subset as
// internal/host/fleet's test fake), and passes each agent command to a
// fake agent, as libvirtd passes it to qemu-ga.
type fakeLibvirtd struct {
	Socket string
	Name   string
	Agent  *qgafake.Agent
	wmu    sync.Mutex
}

const (
	progQEMU           = 0x20008087
	procConnectOpen    = 1
	procConnectClose   = 2
	procDomainXML      = 14
	procAuthList       = 66
	procListAllDomains = 273
	procAgentCommand   = 3 // of progQEMU
)

func startFakeLibvirtd(t *testing.T, name string, a *qgafake.Agent) *fakeLibvirtd {
	t.Helper()
	f := &fakeLibvirtd{Socket: filepath.Join(t.TempDir(), "libvirt-sock"), Name: name, Agent: a}
	ln, err := net.Listen("unix", f.Socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	return f
}

func (f *fakeLibvirtd) uri() string { return "qemu+unix:///system?socket=" + f.Socket }

func (f *fakeLibvirtd) serve(c net.Conn) {
	defer c.Close()
	for {
		var hdr [28]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[0:4])-28)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		prog, proc := binary.BigEndian.Uint32(hdr[4:8]), binary.BigEndian.Uint32(hdr[12:16])
		reply := func(status uint32, payload []byte) {
			out := make([]byte, 28, 28+len(payload))
			binary.BigEndian.PutUint32(out[0:], uint32(28+len(payload)))
			copy(out[4:20], hdr[4:20])
			binary.BigEndian.PutUint32(out[16:], 1) // REPLY
			copy(out[20:24], hdr[20:24])
			binary.BigEndian.PutUint32(out[24:], status)
			f.wmu.Lock()
			c.Write(append(out, payload...))
			f.wmu.Unlock()
		}
		var x xdr
		switch {
		case prog == progQEMU && proc == procAgentCommand:
			go func() {
				_, rest := readDomain(body)
				var x xdr
				x.u32(1)
				x.str(f.agent(readString(rest)))
				reply(0, x.b)
			}()
			continue
		case proc == procAuthList:
			x.u32(1)
			x.u32(0)
		case proc == procConnectOpen, proc == procConnectClose:
		case proc == procListAllDomains:
			x.u32(1)
			x.str(f.Name)
			x.b = append(x.b, make([]byte, 15)...)
			x.b = append(x.b, 1)
			x.u32(1)
			x.u32(1)
		case proc == procDomainXML:
			x.str(fmt.Sprintf("<domain type='qemu' id='1'><name>%s</name><devices><channel type='unix'><source mode='bind' path='/run/x'/><target type='virtio' name='org.qemu.guest_agent.0' state='connected'/></channel></devices></domain>", f.Name))
		default:
			x.u32(1) // an error nobody reads: the source never asks
		}
		reply(0, x.b)
	}
}

// agent runs one command on the fake agent, over a connection of its
// own, and returns its reply line as libvirtd does.
func (f *fakeLibvirtd) agent(req string) string {
	a, b := net.Pipe()
	defer a.Close()
	go f.Agent.Serve(b)
	a.SetDeadline(time.Now().Add(time.Minute))
	io.WriteString(a, req+"\n")
	line, _ := bufio.NewReader(a).ReadString('\n')
	return strings.TrimSpace(line)
}

type xdr struct{ b []byte }

func (x *xdr) u32(v uint32) { x.b = binary.BigEndian.AppendUint32(x.b, v) }

func (x *xdr) str(s string) {
	x.u32(uint32(len(s)))
	x.b = append(x.b, s...)
	for len(x.b)%4 != 0 {
		x.b = append(x.b, 0)
	}
}

func readString(b []byte) string {
	if len(b) < 4 {
		return ""
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return ""
	}
	return string(b[4 : 4+n])
}

func readDomain(b []byte) (string, []byte) {
	name := readString(b)
	off := 4 + (len(name)+3)/4*4 + 16 + 4
	if off > len(b) {
		return name, nil
	}
	return name, b[off:]
}

// libvirtTarget is the domain as the command line finds it.
func libvirtTarget(t *testing.T, f *fakeLibvirtd) Target {
	t.Helper()
	ts, err := fleet.NewLibvirtSource(f.uri()).Targets(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Dial == nil {
		t.Fatalf("the fake libvirtd's domains: %+v %v", ts, err)
	}
	return Target{Target: ts[0], Reach: Reach{Libvirt: f.uri(), Domain: f.Name}}
}

// TestLibvirtDrill drills a domain through libvirt's agent passthrough:
// a healthy drill, then a freeze that outlasts the drill, which its
// guard thaws by listing the domain again on a libvirt connection of its
// own.
func TestLibvirtDrill(t *testing.T) {
	a, g := healthy(t, "/data,/")
	f := startFakeLibvirtd(t, "db1", a)
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
