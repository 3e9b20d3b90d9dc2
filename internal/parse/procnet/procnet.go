// Package procnet parses the kernel's socket tables /proc/net/tcp and
// /proc/net/tcp6 (the files ss and netstat read), so that listening sockets
// can be found without running either tool. Parsing is pure.
package procnet

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// StateListen is TCP_LISTEN in the st column.
const StateListen = 0x0A

// Socket is one row of the table.
type Socket struct {
	Local  netip.AddrPort
	Remote netip.AddrPort
	State  uint8
	UID    uint32
	// Inode identifies the socket; /proc/PID/fd/N links to "socket:[INODE]".
	Inode uint64
}

// Listening reports whether the socket is a listening TCP socket.
func (s Socket) Listening() bool { return s.State == StateListen }

// Parse reads /proc/net/tcp (v6 false) or /proc/net/tcp6 (v6 true). The
// first line is the header. A malformed row is an error naming its line,
// a *problem.Problem.
func Parse(b []byte, v6 bool) ([]Socket, error) {
	bad := func(line int, format string, a ...any) error {
		p := problem.At("", line, format, a...)
		return &p
	}
	var out []Socket
	for i, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if i == 0 || len(f) == 0 {
			continue
		}
		if len(f) < 10 {
			return nil, bad(i+1, "%d fields, want at least 10", len(f))
		}
		var s Socket
		var err error
		if s.Local, err = addrPort(f[1], v6); err != nil {
			return nil, bad(i+1, "local address: %v", err)
		}
		if s.Remote, err = addrPort(f[2], v6); err != nil {
			return nil, bad(i+1, "remote address: %v", err)
		}
		st, err := strconv.ParseUint(f[3], 16, 8)
		if err != nil {
			return nil, bad(i+1, "state %q", f[3])
		}
		s.State = uint8(st)
		uid, err := strconv.ParseUint(f[7], 10, 32)
		if err != nil {
			return nil, bad(i+1, "uid %q", f[7])
		}
		s.UID = uint32(uid)
		if s.Inode, err = strconv.ParseUint(f[9], 10, 64); err != nil {
			return nil, bad(i+1, "inode %q", f[9])
		}
		out = append(out, s)
	}
	return out, nil
}

// addrPort decodes "0100007F:0016". The kernel prints the address as
// 32-bit words in host byte order (%08X of the in-memory word), so the
// bytes are recovered with the native byte order.
func addrPort(s string, v6 bool) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	want := 8
	if v6 {
		want = 32
	}
	if !ok || len(a) != want || len(p) != 4 {
		return netip.AddrPort{}, fmt.Errorf("malformed %q", s)
	}
	raw, err := hex.DecodeString(a)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("malformed %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("malformed port in %q", s)
	}
	var b [16]byte
	for w := 0; w < len(raw)/4; w++ {
		binary.NativeEndian.PutUint32(b[4*w:], binary.BigEndian.Uint32(raw[4*w:]))
	}
	var addr netip.Addr
	if v6 {
		addr = netip.AddrFrom16(b)
	} else {
		addr = netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrPortFrom(addr, uint16(port)), nil
}
