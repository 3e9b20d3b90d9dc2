package systemd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"
)

// defaultRunDir is what sd_booted(3) checks: systemd creates it early at
// boot, so its absence means PID 1 is not systemd.
const defaultRunDir = "/run/systemd/system"

// privateSocket is PID 1's own D-Bus socket, which systemctl and
// systemd-analyze talk to when run as root.
const privateSocket = "/run/systemd/private"

// conn is the part of *sddbus.Conn that Client uses, so tests can run
// without a systemd.
type conn interface {
	GetUnitPropertiesContext(ctx context.Context, unit string) (map[string]any, error)
	GetUnitTypePropertiesContext(ctx context.Context, unit, unitType string) (map[string]any, error)
	// GetUnitPropertyContext reads one property of the Unit interface.
	GetUnitPropertyContext(ctx context.Context, unit, propertyName string) (*sddbus.Property, error)
	// GetManagerProperty has no context; Client bounds it (manager.go).
	GetManagerProperty(prop string) (string, error)
	ListUnitsContext(ctx context.Context) ([]sddbus.UnitStatus, error)
	ListJobsContext(ctx context.Context) ([]sddbus.JobStatus, error)
	Close()
}

var _ conn = (*sddbus.Conn)(nil)

// errClosed is returned by calls made after Close.
var errClosed = errors.New("systemd: client is closed")

// Client is a Manager backed by systemd's D-Bus API. It connects on first
// use, because a check run may never need systemd and connecting costs two
// bus connections. It is safe for concurrent use.
type Client struct {
	live   bool
	runDir string // "" skips the sd_booted test (NewPrivate)
	// dial opens the connection. Its ctx is the connection's lifetime (godbus
	// closes the connection when it ends), not a dial timeout.
	dial func(ctx context.Context) (conn, error)
	// journalctl is the journalctl BootJournal runs; "" looks it up.
	journalctl string

	// life bounds the connection; Close cancels it.
	life   context.Context
	cancel context.CancelFunc

	once sync.Once
	done chan struct{} // closed once conn/err are set

	mu     sync.Mutex
	conn   conn
	err    error
	closed bool
}

var _ Manager = (*Client)(nil)

// New returns a Client. live is false when guestcheck inspects an image root
// (--root): the systemd on this host is then not the one that matters, so
// every call reports ErrNotRunning instead of answering about the wrong system.
func New(live bool) *Client {
	life, cancel := context.WithCancel(context.Background())
	return &Client{
		live:   live,
		runDir: defaultRunDir,
		dial:   dialSystem(privateSocket),
		life:   life,
		cancel: cancel,
		done:   make(chan struct{}),
	}
}

// NewPrivate returns a Client for the manager listening on the private
// socket at path, such as a user manager's $XDG_RUNTIME_DIR/systemd/private.
// The caller names the manager, so there is no "booted with systemd" test.
func NewPrivate(path string) *Client {
	c := New(true)
	c.runDir = ""
	c.dial = func(ctx context.Context) (conn, error) { return dialPrivate(ctx, path) }
	return c
}

// dialPrivate connects to a manager's private socket. It is peer to peer:
// EXTERNAL auth, no Hello.
func dialPrivate(ctx context.Context, path string) (conn, error) {
	return sddbus.NewConnection(func() (*godbus.Conn, error) {
		bc, err := godbus.Dial("unix:path="+path, godbus.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if err := bc.Auth([]godbus.Auth{godbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
			bc.Close()
			return nil, err
		}
		return bc, nil
	})
}

// dialSystem returns the system manager's dial. As root it talks to PID 1
// on its private socket first, as systemctl does: every call is then one
// hop instead of two through the dbus-daemon (against a systemd --user
// with 281 units, scripts/bench-systemd.sh, the systemd check took 64
// instead of 88 ms), and it works without a dbus-daemon. It falls back to the system bus, the only
// way in for other users.
// go-systemd's dial is not bounded by ctx; ctx only ends the connection.
func dialSystem(private string) func(ctx context.Context) (conn, error) {
	return func(ctx context.Context) (conn, error) {
		return dialOrder(os.Geteuid() == 0,
			func() (conn, error) { return dialPrivate(ctx, private) },
			func() (conn, error) { return sddbus.NewSystemConnectionContext(ctx) })
	}
}

// dialOrder is dialSystem's choice: as root the private socket, then the
// bus; otherwise the bus only.
func dialOrder(root bool, private, bus func() (conn, error)) (conn, error) {
	if !root {
		c, err := bus()
		if err != nil {
			return nil, fmt.Errorf("system bus: %w", err)
		}
		return c, nil
	}
	c, perr := private()
	if perr == nil {
		return c, nil
	}
	c, err := bus()
	if err == nil {
		return c, nil
	}
	return nil, fmt.Errorf("private socket: %w; system bus: %w", perr, err)
}

// Close releases the connection, including one whose dial is still under
// way. Later calls fail. It is safe to call more than once.
func (c *Client) Close() error {
	// Consume the Once so a Client closed before first use never dials.
	c.once.Do(func() { c.finish(nil, errClosed) })
	c.cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	return nil
}

// finish records the outcome of connecting. A connection that arrives after
// Close, or after every caller gave up and closed the Client, is closed here
// so an abandoned dial does not leak it.
func (c *Client) finish(cn conn, err error) {
	c.mu.Lock()
	if c.closed && cn != nil {
		cn.Close()
		cn, err = nil, errClosed
	}
	c.conn, c.err = cn, err
	c.mu.Unlock()
	close(c.done)
}

// start runs once: the cheap checks synchronously, the dial in a goroutine
// because it ignores contexts and callers must be able to stop waiting.
func (c *Client) start() {
	if !c.live {
		c.finish(nil, fmt.Errorf("%w: --root is not the running system", ErrNotRunning))
		return
	}
	if err := c.checkBooted(); err != nil {
		c.finish(nil, err)
		return
	}
	go func() {
		cn, err := c.dial(c.life)
		if err != nil {
			c.finish(nil, dialError(err))
			return
		}
		c.finish(cn, nil)
	}()
}

func (c *Client) checkBooted() error {
	if c.runDir == "" {
		return nil
	}
	fi, err := os.Lstat(c.runDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: not booted with systemd: %s is missing", ErrNotRunning, c.runDir)
	case err != nil:
		return fmt.Errorf("%w: not booted with systemd: %w", ErrNotRunning, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: not booted with systemd: %s is not a directory", ErrNotRunning, c.runDir)
	}
	return nil
}

// dialError marks "nothing listens" as ErrNotRunning; other failures (auth,
// permissions) are real problems and stay plain errors.
func dialError(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w: cannot reach systemd: %w", ErrNotRunning, err)
	}
	return fmt.Errorf("systemd: connect: %w", err)
}

// connect returns the shared connection, waiting for the first dial at most
// until ctx ends.
func (c *Client) connect(ctx context.Context) (conn, error) {
	c.once.Do(c.start)
	select {
	case <-c.done: // prefer a finished dial over an expired ctx
	default:
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("systemd: connect: %w", ctx.Err())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	return c.conn, c.err
}

// notAnswering reports whether err means the bus works but nothing serves
// org.freedesktop.systemd1 (dbus-daemon without systemd, e.g. in a container).
func notAnswering(err error) bool {
	var name string
	var v godbus.Error
	var p *godbus.Error
	switch {
	case errors.As(err, &v):
		name = v.Name
	case errors.As(err, &p) && p != nil:
		name = p.Name
	default:
		return false
	}
	switch name {
	case "org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NameHasNoOwner":
		return true
	}
	return strings.HasPrefix(name, "org.freedesktop.DBus.Error.Spawn.")
}

func callError(name string, err error) error {
	if notAnswering(err) {
		return fmt.Errorf("systemd: unit %s: %w: no systemd on the bus: %w", name, ErrNotRunning, err)
	}
	return fmt.Errorf("systemd: unit %s: %w", name, err)
}

// Units implements Manager. With no names it only checks that systemd can be
// reached, which lets a caller probe for ErrNotRunning.
func (c *Client) Units(ctx context.Context, names ...string) ([]UnitState, error) {
	cn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]UnitState, 0, len(names))
	for _, name := range names {
		st, err := unitState(ctx, cn, name)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func unitState(ctx context.Context, cn conn, name string) (UnitState, error) {
	// One GetAll instead of one Get per property.
	p, err := cn.GetUnitPropertiesContext(ctx, name)
	if err != nil {
		return UnitState{}, callError(name, err)
	}
	st := UnitState{
		Name:          name,
		LoadState:     str(p, "LoadState"),
		ActiveState:   str(p, "ActiveState"),
		SubState:      str(p, "SubState"),
		UnitFileState: str(p, "UnitFileState"),
	}
	if !st.Found() || !strings.HasSuffix(name, ".service") {
		return st, nil
	}
	// Service properties live on another interface; the Unit GetAll above
	// does not include them.
	sp, err := cn.GetUnitTypePropertiesContext(ctx, name, "Service")
	if err != nil {
		return UnitState{}, callError(name, err)
	}
	st.NRestarts = u32(sp, "NRestarts")
	st.MainPID = u32(sp, "MainPID")
	return st, nil
}

func str(p map[string]any, k string) string {
	v, _ := p[k].(string)
	return v
}

func u32(p map[string]any, k string) uint32 {
	v, _ := p[k].(uint32)
	return v
}
