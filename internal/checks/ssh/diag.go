package ssh

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/parse/procnet"
)

// The listening sockets come from the kernel's sock_diag netlink dump,
// asked for TCP_LISTEN only: the kernel then walks only its listening
// hash. Reading /proc/net/tcp walks the whole established hash too, which
// costs about 4 ms per file on a host with much memory (a large hash)
// however few sockets it has. The dump reports the same sockets of the same
// network namespace; ReadListeners falls back to /proc/net/tcp* when it
// fails.

const (
	tcpListen = 10 // TCP_LISTEN in include/net/tcp_states.h
	// Sizes of struct inet_diag_req_v2 and struct inet_diag_msg
	// (include/uapi/linux/inet_diag.h).
	inetDiagReqLen = 56
	inetDiagMsgLen = 72
	// diagTimeout bounds the dump when the context has no deadline.
	diagTimeout = 2 * time.Second
)

// diagRequest is the netlink message asking for family's listening TCP
// sockets.
func diagRequest(family uint8, seq uint32) []byte {
	b := make([]byte, unix.NLMSG_HDRLEN+inetDiagReqLen)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(b[8:], seq)
	r := b[unix.NLMSG_HDRLEN:]
	r[0] = family
	r[1] = unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(r[4:], 1<<tcpListen)
	return b
}

// parseDiagMsg decodes one struct inet_diag_msg as a procnet.Socket (the
// form /proc/net/tcp gives). Ports and addresses are in network byte
// order; the other fields in host order.
func parseDiagMsg(b []byte) (procnet.Socket, error) {
	var s procnet.Socket
	if len(b) < inetDiagMsgLen {
		return s, fmt.Errorf("inet_diag_msg of %d bytes, want %d", len(b), inetDiagMsgLen)
	}
	family, state := b[0], b[1]
	sport, dport := binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint16(b[6:])
	var src, dst netip.Addr
	switch family {
	case unix.AF_INET:
		src, dst = netip.AddrFrom4([4]byte(b[8:12])), netip.AddrFrom4([4]byte(b[24:28]))
	case unix.AF_INET6:
		src, dst = netip.AddrFrom16([16]byte(b[8:24])), netip.AddrFrom16([16]byte(b[24:40]))
	default:
		return s, fmt.Errorf("inet_diag_msg of address family %d", family)
	}
	s.Local, s.Remote = netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, dport)
	s.State = state
	s.UID = binary.NativeEndian.Uint32(b[64:])
	s.Inode = uint64(binary.NativeEndian.Uint32(b[68:]))
	return s, nil
}

// diagListening dumps family's listening TCP sockets (AF_INET or
// AF_INET6) through sock_diag, within ctx's deadline.
func diagListening(ctx context.Context, family uint8) ([]procnet.Socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(diagTimeout)
	}
	left := time.Until(deadline)
	if left <= 0 {
		return nil, context.DeadlineExceeded
	}
	tv := unix.NsecToTimeval(left.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return nil, fmt.Errorf("sock_diag timeout: %w", err)
	}
	const seq = 1
	if err := unix.Sendto(fd, diagRequest(family, seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("sock_diag request: %w", err)
	}
	var out []procnet.Socket
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sock_diag reply: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("sock_diag reply: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != seq {
				continue
			}
			if m.Header.Flags&unix.NLM_F_DUMP_INTR != 0 {
				// The table changed during the dump: it may be incomplete.
				return nil, errors.New("sock_diag dump interrupted")
			}
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return nil, errors.New("sock_diag: malformed error reply")
				}
				if errno := int32(binary.NativeEndian.Uint32(m.Data)); errno != 0 {
					return nil, fmt.Errorf("sock_diag: %w", unix.Errno(-errno))
				}
			case unix.SOCK_DIAG_BY_FAMILY:
				s, err := parseDiagMsg(m.Data)
				if err != nil {
					return nil, err
				}
				if s.Listening() {
					out = append(out, s)
				}
			}
		}
	}
}
