package vmm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
	"github.com/guestcheck/guestcheck/internal/shared/clean"

	"github.com/digitalocean/go-qemu/qmp"
)

// Monitor is a QMP client on a QEMU's monitor socket. It is go-qemu's
// qmp.Monitor (so go-qemu's typed API, qmp/raw, runs over it) without
// the two races of go-qemu's SocketMonitor, which dropped commands here:
//   - SocketMonitor hands Run the scanner's own buffer, which the next
//     line overwrites; QEMU writes an event right after many replies
//     (device_add, system_reset, quit), so Run could return garbage or
//     "unexpected end of JSON input" (go-qemu issue #226);
//   - it reads qmp_capabilities' reply as the next line, so an event
//     sent before that reply is taken for it, and every later command
//     gets the reply before its own (go-qemu PR #210).
//
// Each command here carries an id that its reply must echo, so a reply
// that arrives after its caller gave up is dropped rather than handed to
// the next command. QEMU is confined but treated as hostile: lines are
// bounded, and every wait has a deadline or ends with the connection.
type Monitor struct {
	conn net.Conn
	// Version is QEMU's, from its greeting.
	Version qmp.Version

	cmdMu sync.Mutex // one command in flight
	mu    sync.Mutex
	seq   uint64
	wait  map[string]chan reply
	subs  map[chan qmp.Event]struct{}
	done  chan struct{} // closed when the reader ends
	err   error         // why the reader ended
}

// maxQMPLine bounds one QMP message; query-hotpluggable-cpus and
// query-memory-devices of a large VM stay far below it.
const maxQMPLine = 1 << 20

// eventBuffer is how many events a slow subscriber may fall behind
// before further ones are dropped for it (a guest cannot stall QMP).
const eventBuffer = 256

type reply struct {
	line []byte
	err  error
}

// DialMonitor connects to the QMP socket at path, reads QEMU's greeting
// and leaves capabilities negotiation, all within ctx.
func DialMonitor(ctx context.Context, path string) (*Monitor, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) { // it names the path again
			err = oe.Err
		}
		return nil, fmt.Errorf("QMP %s: %w", path, err)
	}
	m := &Monitor{conn: c, wait: map[string]chan reply{}, subs: map[chan qmp.Event]struct{}{}, done: make(chan struct{})}
	greeting := make(chan qmp.Version, 1)
	go m.read(greeting)
	select {
	case v := <-greeting:
		m.Version = v
	case <-m.done:
		return nil, fmt.Errorf("QMP %s: %w", path, m.err)
	case <-ctx.Done():
		m.Disconnect()
		return nil, fmt.Errorf("QMP %s: no greeting: %w", path, ctx.Err())
	}
	if _, err := m.RunContext(ctx, []byte(`{"execute":"qmp_capabilities"}`)); err != nil {
		m.Disconnect()
		return nil, fmt.Errorf("QMP %s: %w", path, err)
	}
	return m, nil
}

// WaitMonitor dials path until QEMU answers (it creates the socket as
// it starts), each try bounded to 2 s, until ctx ends or gone closes
// (QEMU exited; nil waits for ctx alone).
func WaitMonitor(ctx context.Context, path string, gone <-chan struct{}) (*Monitor, error) {
	for {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		m, err := DialMonitor(dctx, path)
		cancel()
		if err == nil {
			return m, nil
		}
		select {
		case <-gone:
			return nil, errQEMUGone
		case <-ctx.Done():
			return nil, fmt.Errorf("%v (%w)", err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// errQEMUGone is WaitMonitor's error when QEMU exits first.
var errQEMUGone = errors.New("QEMU exited before its monitor answered")

// message is what the reader needs of any QMP line.
type message struct {
	QMP *struct {
		Version qmp.Version `json:"version"`
	} `json:"QMP"`
	Event string          `json:"event"`
	ID    json.RawMessage `json:"id"`
	Error *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
}

// read owns the connection's reading side until it fails or closes.
func (m *Monitor) read(greeting chan<- qmp.Version) {
	s := bufio.NewScanner(m.conn)
	s.Buffer(make([]byte, 0, 64<<10), maxQMPLine)
	var err error
	for s.Scan() {
		line := bytes.Clone(s.Bytes()) // the scanner reuses its buffer
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var msg message
		if err = json.Unmarshal(line, &msg); err != nil {
			err = fmt.Errorf("QEMU sent something that is not QMP: %.120q", line)
			break
		}
		switch {
		case msg.QMP != nil:
			select {
			case greeting <- msg.QMP.Version:
			default:
			}
		case msg.Event != "":
			var e qmp.Event
			if json.Unmarshal(line, &e) == nil {
				m.publish(e)
			}
		default:
			m.deliver(msg, line)
		}
	}
	if err == nil {
		switch err = s.Err(); {
		case errors.Is(err, bufio.ErrTooLong):
			err = fmt.Errorf("QEMU sent a QMP message over %d MiB", maxQMPLine>>20)
		case err == nil:
			err = errors.New("QEMU closed its monitor")
		}
	}
	m.mu.Lock()
	m.err = err
	for c := range m.subs {
		close(c)
		delete(m.subs, c)
	}
	m.mu.Unlock()
	close(m.done)
}

// deliver hands a reply to the command whose id it echoes; a reply
// nobody waits for (its caller gave up) is dropped.
func (m *Monitor) deliver(msg message, line []byte) {
	var id string
	if json.Unmarshal(msg.ID, &id) != nil {
		return
	}
	m.mu.Lock()
	ch := m.wait[id]
	delete(m.wait, id)
	m.mu.Unlock()
	if ch == nil {
		return
	}
	r := reply{line: line}
	if msg.Error != nil {
		// QEMU is confined, not trusted; its own messages are short.
		desc := problem.OneLine(clean.Text(msg.Error.Desc))
		if len(desc) > 300 {
			desc = strings.ToValidUTF8(desc[:300], "") + "…"
		}
		r.err = errors.New(desc)
	}
	ch <- r // buffered: never blocks the reader
}

func (m *Monitor) publish(e qmp.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for c := range m.subs {
		select {
		case c <- e:
		default: // a subscriber too far behind loses events, not QMP
		}
	}
}

// RunContext sends one command (a JSON object with "execute" and
// optionally "arguments") and returns QEMU's reply line; a reply with an
// error is returned as that error. It gives up when ctx ends.
func (m *Monitor) RunContext(ctx context.Context, command []byte) ([]byte, error) {
	var cmd map[string]json.RawMessage
	if err := json.Unmarshal(command, &cmd); err != nil || cmd["execute"] == nil {
		return nil, fmt.Errorf("QMP: not a command: %.120q", command)
	}
	var name string
	json.Unmarshal(cmd["execute"], &name)
	m.cmdMu.Lock()
	defer m.cmdMu.Unlock()
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("QMP %s: %w", name, m.err)
	}
	m.seq++
	id := fmt.Sprintf("gc-%d", m.seq)
	ch := make(chan reply, 1)
	m.wait[id] = ch
	m.mu.Unlock()
	forget := func() {
		m.mu.Lock()
		delete(m.wait, id)
		m.mu.Unlock()
	}
	cmd["id"], _ = json.Marshal(id)
	b, _ := json.Marshal(cmd)
	if dl, ok := ctx.Deadline(); ok {
		m.conn.SetWriteDeadline(dl)
	} else {
		m.conn.SetWriteDeadline(time.Time{})
	}
	if _, err := m.conn.Write(append(b, '\n')); err != nil {
		forget()
		return nil, fmt.Errorf("QMP %s: %w", name, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("QMP %s: %w", name, r.err)
		}
		return r.line, nil
	case <-m.done:
		forget()
		return nil, fmt.Errorf("QMP %s: %w", name, m.err)
	case <-ctx.Done():
		forget()
		return nil, fmt.Errorf("QMP %s: no answer: %w", name, ctx.Err())
	}
}

// Connect is a no-op: DialMonitor connected already (qmp.Monitor).
func (m *Monitor) Connect() error { return nil }

// Disconnect closes the connection; the reader then ends, and every
// event channel is closed (qmp.Monitor).
func (m *Monitor) Disconnect() error { return m.conn.Close() }

// Run is RunContext with no deadline but the connection's end
// (qmp.Monitor); prove and the tests call RunContext.
func (m *Monitor) Run(command []byte) ([]byte, error) {
	return m.RunContext(context.Background(), command)
}

// Events returns QEMU's events from now on, until ctx ends or the
// connection does (qmp.Monitor). A subscriber that falls more than
// eventBuffer events behind loses the ones after.
func (m *Monitor) Events(ctx context.Context) (<-chan qmp.Event, error) {
	c := make(chan qmp.Event, eventBuffer)
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		close(c)
		return c, nil
	}
	m.subs[c] = struct{}{}
	m.mu.Unlock()
	go func() {
		select {
		case <-ctx.Done():
			m.mu.Lock()
			if _, ok := m.subs[c]; ok {
				delete(m.subs, c)
				close(c)
			}
			m.mu.Unlock()
		case <-m.done:
		}
	}()
	return c, nil
}

var _ qmp.Monitor = (*Monitor)(nil)
