package fleettest

import (
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// libvirt RPC numbers the fake answers (libvirt's remote_protocol.x and
// qemu_protocol.x).
const (
	progQEMU           = 0x20008087
	procConnectOpen    = 1
	procConnectClose   = 2
	procDomainXML      = 14
	procAuthList       = 66
	procListAllDomains = 273
	procAgentCommand   = 3 // of progQEMU
)

// Domain is one running domain of a Libvirtd: its name and its XML
// description ("" for a domain that is gone before its XML is read).
type Domain struct {
	Name string
	XML  string
}

// AgentReply is the fake's answer to one agent command: the reply
// string, or a libvirt error, after Delay.
type AgentReply struct {
	Reply   string
	ErrCode uint32
	ErrMsg  string
	Delay   time.Duration
}

// Libvirtd speaks enough of libvirt's RPC protocol on a unix socket for
// fleet's libvirt source, which guestcheck fleet and freeze-drill reach
// domains through: auth-list, open, close, list-all-domains,
// get-xml-desc and the QEMU program's agent command.
type Libvirtd struct {
	Domains []Domain
	// Agent answers an agent command (the request JSON) for a domain.
	Agent func(dom, cmd string) AgentReply
	// Raw, when set, is written instead of any reply: a hostile peer.
	Raw []byte

	socket string
	mu     sync.Mutex
	conns  int
}

// StartLibvirtd serves f on a socket in a temporary directory until the
// test ends.
func StartLibvirtd(t testing.TB, f *Libvirtd) *Libvirtd {
	t.Helper()
	f.socket = filepath.Join(t.TempDir(), "libvirt-sock")
	ln, err := net.Listen("unix", f.socket)
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
			f.mu.Lock()
			f.conns++
			f.mu.Unlock()
			go f.serve(c)
		}
	}()
	return f
}

// Socket is the path f listens on.
func (f *Libvirtd) Socket() string { return f.socket }

// URI is a libvirt URI that connects to f.
func (f *Libvirtd) URI() string { return "qemu+unix:///system?socket=" + f.socket }

// Conns counts the connections f has accepted.
func (f *Libvirtd) Conns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns
}

func (f *Libvirtd) serve(c net.Conn) {
	defer c.Close()
	var wmu sync.Mutex
	for {
		var hdr [28]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[0:4])
		if n < 28 {
			return
		}
		body := make([]byte, n-28)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if f.Raw != nil {
			c.Write(f.Raw)
			continue
		}
		prog, proc := binary.BigEndian.Uint32(hdr[4:8]), binary.BigEndian.Uint32(hdr[12:16])
		reply := func(status uint32, payload []byte) {
			out := make([]byte, 28, 28+len(payload))
			binary.BigEndian.PutUint32(out[0:], uint32(28+len(payload)))
			copy(out[4:24], hdr[4:24])              // program, version, procedure, type, serial
			binary.BigEndian.PutUint32(out[16:], 1) // REPLY
			binary.BigEndian.PutUint32(out[24:], status)
			wmu.Lock()
			c.Write(append(out, payload...))
			wmu.Unlock()
		}
		if prog == progQEMU && proc == procAgentCommand {
			// Answer concurrently, as libvirtd does: a slow agent
			// must not hold up the connection.
			go f.agentCommand(body, reply)
			continue
		}
		f.remote(proc, body, reply)
	}
}

func (f *Libvirtd) remote(proc uint32, body []byte, reply func(uint32, []byte)) {
	var x xdrBuf
	switch proc {
	case procAuthList:
		x.u32(1)
		x.u32(0) // REMOTE_AUTH_NONE
	case procConnectOpen, procConnectClose:
	case procListAllDomains:
		x.u32(uint32(len(f.Domains)))
		for i, d := range f.Domains {
			x.domain(d.Name, i+1)
		}
		x.u32(uint32(len(f.Domains)))
	case procDomainXML:
		name, _ := readDomain(body)
		for _, d := range f.Domains {
			if d.Name == name && d.XML != "" {
				x.str(d.XML)
				reply(0, x.b)
				return
			}
		}
		reply(1, libvirtError(42, "Domain not found: no domain with matching name '"+name+"'"))
		return
	default:
		reply(1, libvirtError(1, "unknown procedure"))
		return
	}
	reply(0, x.b)
}

func (f *Libvirtd) agentCommand(body []byte, reply func(uint32, []byte)) {
	name, rest := readDomain(body)
	r := f.Agent(name, readString(rest))
	time.Sleep(r.Delay)
	if r.ErrCode != 0 {
		reply(1, libvirtError(r.ErrCode, r.ErrMsg))
		return
	}
	var x xdrBuf
	x.u32(1) // the optional string is present
	x.str(r.Reply)
	reply(0, x.b)
}

// xdrBuf encodes XDR values.
type xdrBuf struct{ b []byte }

func (x *xdrBuf) u32(v uint32) { x.b = binary.BigEndian.AppendUint32(x.b, v) }

func (x *xdrBuf) str(s string) {
	x.u32(uint32(len(s)))
	x.b = append(x.b, s...)
	for len(x.b)%4 != 0 {
		x.b = append(x.b, 0)
	}
}

// domain encodes remote_nonnull_domain: name, 16-byte UUID, id.
func (x *xdrBuf) domain(name string, id int) {
	x.str(name)
	var uuid [16]byte
	uuid[15] = byte(id)
	x.b = append(x.b, uuid[:]...)
	x.u32(uint32(id))
}

// libvirtError encodes remote_error with a code and a message.
func libvirtError(code uint32, msg string) []byte {
	var x xdrBuf
	x.u32(code)
	x.u32(10) // VIR_FROM_QEMU
	x.u32(1)  // message present
	x.str(msg)
	x.u32(2) // VIR_ERR_ERROR
	for range 7 {
		x.u32(0) // dom, str1-3, int1-2, net: absent or zero
	}
	return x.b
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

// readDomain decodes a remote_nonnull_domain and returns what follows.
func readDomain(b []byte) (string, []byte) {
	name := readString(b)
	off := 4 + (len(name)+3)/4*4 + 16 + 4
	if off > len(b) {
		return name, nil
	}
	return name, b[off:]
}
