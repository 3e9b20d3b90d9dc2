// Package qga is a minimal client for the QEMU guest agent protocol
// (newline-delimited JSON with a 0xFF-delimited resynchronisation). It is
// small enough to live in guestcheck's tests and in the host-side VM harness
// (test/vm/), where it talks to the chardev socket of a guest's
// org.qemu.guest_agent.0 port. go-qemu's QMP monitor cannot be used for
// this: QGA sends no greeting.
package qga

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// MaxReplySize bounds one reply line so that a confused peer cannot make
// the client buffer without limit.
const MaxReplySize = 16 << 20

// DefaultTimeout bounds each exchange when ctx has no earlier deadline.
const DefaultTimeout = 10 * time.Second

// sentinel is the byte qemu-ga puts before a guest-sync-delimited reply,
// and that a client sends to reset the agent's JSON parser.
const sentinel = 0xFF

// ErrNoReply is returned by Exec for commands that never send a reply on
// success (the agent powers off or suspends before answering); use Send.
var ErrNoReply = errors.New("qga: command sends no reply; use Send")

// ErrClosed is returned by calls made after Close.
var ErrClosed = errors.New("qga: client is closed")

// Error is an error reply from the agent.
type Error struct {
	Class string `json:"class"` // "CommandNotFound", "GenericError", ...
	Desc  string `json:"desc"`
}

func (e *Error) Error() string { return fmt.Sprintf("qga: %s: %s", e.Class, e.Desc) }

// noReply lists commands that answer nothing on success (qga/qapi-schema.json).
var noReply = map[string]bool{
	"guest-shutdown": true, "guest-suspend-disk": true, "guest-suspend-ram": true, "guest-suspend-hybrid": true,
}

// SendsNoReply reports whether cmd answers nothing on success, for
// transports other than Client (libvirt's passthrough) to refuse it as
// Exec does.
func SendsNoReply(cmd string) bool { return noReply[cmd] }

// Client talks to one agent over one connection. Calls are serialised; it
// is safe for concurrent use. A call that fails midway (timeout, cancel)
// leaves the stream in an unknown state, so the next call resynchronises
// first.
type Client struct {
	mu      sync.Mutex
	conn    net.Conn
	br      *bufio.Reader
	synced  bool
	closed  bool
	timeout time.Duration
}

// Dial connects to an agent ("unix", "/path/qga.sock") and synchronises.
func Dial(ctx context.Context, network, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("qga: dial %s: %w", addr, err)
	}
	c := New(conn)
	if err := c.Sync(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// New wraps an open connection; the first call synchronises.
func New(conn net.Conn) *Client {
	return &Client{conn: conn, br: bufio.NewReader(conn), timeout: DefaultTimeout}
}

// SetTimeout changes the bound on each exchange used when ctx has no
// earlier deadline.
func (c *Client) SetTimeout(d time.Duration) {
	c.mu.Lock()
	c.timeout = d
	c.mu.Unlock()
}

// Close closes the connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.conn.Close()
}

// Sync resets the agent's parser and discards stale replies: it sends 0xFF
// and guest-sync-delimited with a random id, then skips everything up to
// the 0xFF-prefixed reply carrying that id.
func (c *Client) Sync(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sync(ctx)
}

func (c *Client) sync(ctx context.Context) error {
	if c.closed {
		return ErrClosed
	}
	stop := c.arm(ctx)
	defer stop()
	id := rand.Int64N(1 << 52) // exact in a float64, whatever the peer parses with
	req, _ := json.Marshal(request{Execute: "guest-sync-delimited", Arguments: map[string]int64{"id": id}})
	msg := append([]byte{sentinel}, append(req, '\n')...)
	if _, err := c.conn.Write(msg); err != nil {
		return c.fail(ctx, "sync", err)
	}
	for {
		// The agent first answers the stray 0xFF with a parse error, and
		// replies to earlier abandoned requests may still be queued.
		if _, err := c.br.ReadBytes(sentinel); err != nil {
			return c.fail(ctx, "sync", err)
		}
		line, err := c.readLine()
		if err != nil {
			return c.fail(ctx, "sync", err)
		}
		var r struct {
			Return *int64 `json:"return"`
		}
		if json.Unmarshal(line, &r) == nil && r.Return != nil && *r.Return == id {
			c.synced = true
			return nil
		}
	}
}

type request struct {
	Execute   string `json:"execute"`
	Arguments any    `json:"arguments,omitempty"`
}

type response struct {
	Return json.RawMessage `json:"return"`
	Error  *Error          `json:"error"`
}

// Exec runs cmd with args (nil for none) and decodes the reply's "return"
// value into result (nil to ignore it). An error reply is returned as *Error.
func (c *Client) Exec(ctx context.Context, cmd string, args, result any) error {
	if noReply[cmd] {
		return ErrNoReply
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if !c.synced {
		if err := c.sync(ctx); err != nil {
			return err
		}
	}
	stop := c.arm(ctx)
	defer stop()
	if err := c.send(cmd, args); err != nil {
		return c.fail(ctx, cmd, err)
	}
	line, err := c.readLine()
	if err != nil {
		return c.fail(ctx, cmd, err)
	}
	var r response
	if err := json.Unmarshal(line, &r); err != nil {
		c.synced = false
		return fmt.Errorf("qga: %s: bad reply %q: %w", cmd, truncate(line), err)
	}
	if r.Error != nil {
		return r.Error
	}
	if r.Return == nil {
		c.synced = false
		return fmt.Errorf("qga: %s: reply has neither return nor error: %q", cmd, truncate(line))
	}
	if result != nil {
		if err := json.Unmarshal(r.Return, result); err != nil {
			return fmt.Errorf("qga: %s: decode return: %w", cmd, err)
		}
	}
	return nil
}

// Send writes cmd without waiting for a reply, for guest-shutdown and
// guest-suspend-*. The stream is resynchronised before the next Exec.
func (c *Client) Send(ctx context.Context, cmd string, args any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	stop := c.arm(ctx)
	defer stop()
	c.synced = false
	if err := c.send(cmd, args); err != nil {
		return c.fail(ctx, cmd, err)
	}
	return nil
}

func (c *Client) send(cmd string, args any) error {
	b, err := json.Marshal(request{Execute: cmd, Arguments: args})
	if err != nil {
		return err
	}
	_, err = c.conn.Write(append(b, '\n'))
	return err
}

// readLine reads one reply line, bounded by MaxReplySize.
func (c *Client) readLine() ([]byte, error) {
	var out []byte
	for {
		chunk, err := c.br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > MaxReplySize {
			return nil, fmt.Errorf("reply longer than %d bytes", MaxReplySize)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return bytes.TrimSpace(out), nil
	}
}

// arm sets the connection deadline from ctx (or the default timeout) and
// makes cancelling ctx interrupt blocked I/O. The returned func disarms it;
// context.AfterFunc leaves no goroutine behind.
func (c *Client) arm(ctx context.Context) func() {
	dl := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.conn.SetDeadline(dl)
	// The callback may start after stop() returns; active keeps a late one
	// from breaking the next call's deadline.
	var mu sync.Mutex
	active := true
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if active {
			c.conn.SetDeadline(time.Unix(1, 0))
		}
	})
	return func() {
		stop()
		mu.Lock()
		active = false
		mu.Unlock()
		c.conn.SetDeadline(time.Time{})
	}
}

// fail marks the stream unsynchronised and prefers ctx's error, which says
// why a deadline fired.
func (c *Client) fail(ctx context.Context, op string, err error) error {
	c.synced = false
	if ctx.Err() != nil {
		return fmt.Errorf("qga: %s: %w", op, ctx.Err())
	}
	// The connection deadline is ctx's, and may fire a moment before ctx
	// itself reports it.
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return fmt.Errorf("qga: %s: %w", op, context.DeadlineExceeded)
	}
	return fmt.Errorf("qga: %s: %w", op, err)
}

func truncate(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// Command is one entry of guest-info's supported_commands.
type Command struct {
	Name            string `json:"name"`
	Enabled         bool   `json:"enabled"`
	SuccessResponse bool   `json:"success-response"`
}

// Info is the reply of guest-info: the agent's version and, for every
// command it knows, whether its RPC filter lets it run.
type Info struct {
	Version           string    `json:"version"`
	SupportedCommands []Command `json:"supported_commands"`
}

// Info calls guest-info.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var in Info
	err := c.Exec(ctx, "guest-info", nil, &in)
	return in, err
}

// Ping calls guest-ping.
func (c *Client) Ping(ctx context.Context) error { return c.Exec(ctx, "guest-ping", nil, nil) }
