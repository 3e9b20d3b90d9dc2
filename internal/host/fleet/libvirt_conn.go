package fleet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/digitalocean/go-libvirt"
)

// libvirt's RPC framing: every packet starts with its length (4 bytes,
// big-endian, the length included) and a 24-byte header.
const (
	libvirtPacketMin = 4 + 24
	// libvirtPacketMax is libvirt's own VIR_NET_MESSAGE_MAX (32 MiB).
	libvirtPacketMax = 32 << 20
)

// libvirtCallTimeout bounds a libvirt call whose ctx has no deadline.
const libvirtCallTimeout = 30 * time.Second

// boundedConn checks libvirt's packet framing as go-libvirt reads it.
// go-libvirt allocates whatever length a packet announces (up to 4 GiB)
// and panics on one shorter than the header; a hostile or broken peer
// must get neither, so a length outside libvirt's own bounds closes the
// connection instead.
type boundedConn struct {
	net.Conn
	mu   sync.Mutex
	hdr  [4]byte
	nhdr int
	left uint32 // bytes of the current packet still to come
	err  error
}

// Read reads from the connection and fails it at the first bad length.
func (c *boundedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = c.scan(p[:n])
	}
	if c.err != nil {
		c.Conn.Close()
		return 0, c.err
	}
	return n, err
}

// scan follows the packet boundaries through b.
func (c *boundedConn) scan(b []byte) error {
	for len(b) > 0 {
		if c.left == 0 {
			k := copy(c.hdr[c.nhdr:], b)
			c.nhdr += k
			b = b[k:]
			if c.nhdr < len(c.hdr) {
				continue
			}
			c.nhdr = 0
			n := binary.BigEndian.Uint32(c.hdr[:])
			if n < libvirtPacketMin || n > libvirtPacketMax {
				return fmt.Errorf("libvirt sent a packet of %d bytes, outside %d to %d", n, libvirtPacketMin, libvirtPacketMax)
			}
			c.left = n - 4
			continue
		}
		k := min(uint32(len(b)), c.left)
		c.left -= k
		b = b[k:]
	}
	return nil
}

// connDialer hands go-libvirt a connection already made with a deadline.
type connDialer struct{ c net.Conn }

func (d connDialer) Dial() (net.Conn, error) { return d.c, nil }

// lvConn is one connection to libvirtd. go-libvirt's calls take no
// context: each runs in a goroutine, and a call still running when ctx
// ends closes the connection, which fails it (go-libvirt's
// ErrInterrupted) and every later call.
type lvConn struct {
	l   *libvirt.Libvirt
	raw net.Conn
}

// dialLibvirt connects to libvirtd's socket and opens the driver name
// (qemu:///system).
func dialLibvirt(ctx context.Context, socket, name string) (*lvConn, error) {
	ctx, cancel := withDefaultTimeout(ctx, libvirtCallTimeout)
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, &libvirtDialError{socket: socket, err: err}
	}
	bc := &boundedConn{Conn: raw}
	c := &lvConn{l: libvirt.NewWithDialer(connDialer{bc}), raw: bc}
	if err := c.do(ctx, "connect to "+name, func() error { return c.l.ConnectToURI(libvirt.ConnectURI(name)) }); err != nil {
		raw.Close()
		return nil, err
	}
	return c, nil
}

// libvirtDialError is a failed connection to libvirt's socket, worded
// for the operator: libvirt not running, or not ours to use.
type libvirtDialError struct {
	socket string
	err    error
}

func (e *libvirtDialError) Error() string {
	switch {
	case errors.Is(e.err, syscall.ENOENT):
		return "libvirt is not running here: no socket " + e.socket + " (start libvirtd or virtqemud, or name its socket: --libvirt qemu+unix:///system?socket=PATH)"
	case errors.Is(e.err, syscall.ECONNREFUSED):
		return "libvirt is not running here: nothing listens on " + e.socket + " (start libvirtd or virtqemud)"
	case errors.Is(e.err, syscall.EACCES) || errors.Is(e.err, syscall.EPERM):
		return "permission denied on " + e.socket + ": run as root, in the libvirt group, or with polkit's org.libvirt.unix.manage"
	case errors.Is(e.err, context.DeadlineExceeded):
		return "libvirt did not accept a connection on " + e.socket + " in time"
	}
	var oe *net.OpError
	if errors.As(e.err, &oe) && oe.Err != nil {
		return "cannot connect to libvirt on " + e.socket + ": " + OneLine(oe.Err.Error(), 200)
	}
	return "cannot connect to libvirt on " + e.socket + ": " + OneLine(e.err.Error(), 200)
}

func (e *libvirtDialError) Unwrap() error { return e.err }

// do runs f, one go-libvirt call, within ctx (or libvirtCallTimeout).
func (c *lvConn) do(ctx context.Context, what string, f func() error) error {
	ctx, cancel := withDefaultTimeout(ctx, libvirtCallTimeout)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("libvirt %s: %w", what, err)
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		c.raw.Close()
		// The closed socket ends the call; do not wait on it for long.
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		return fmt.Errorf("libvirt %s: %w", what, ctx.Err())
	}
}

// close says goodbye to libvirtd, briefly, and closes the socket.
func (c *lvConn) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c.do(ctx, "disconnect", c.l.Disconnect)
	return c.raw.Close()
}

// withDefaultTimeout bounds ctx by d when it has no deadline of its own.
func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
