package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/guestcheck/guestcheck/internal/host/qga"
)

// LibvirtSystemURI is the URI of the host's system QEMU driver, the
// default source when its socket exists.
const LibvirtSystemURI = "qemu:///system"

// libvirtSocketDir is where libvirtd (libvirt-sock) or the modular
// virtqemud (virtqemud-sock) listen for qemu:///system.
const libvirtSocketDir = "/var/run/libvirt"

// maxDomains bounds one listing (libvirt's REMOTE_DOMAIN_LIST_MAX).
const maxDomains = 16384

// ErrAgentNotConnected is under libvirt's "guest agent is not
// connected" (and "disappeared") errors: the channel exists, no agent
// answers on it.
var ErrAgentNotConnected = errors.New(reasonNotConnected)

// notConnected is libvirt's own words for ErrAgentNotConnected.
type notConnected struct{ msg string }

func (e notConnected) Error() string { return e.msg }
func (e notConnected) Unwrap() error { return ErrAgentNotConnected }

// libvirtEndpoint is a parsed --libvirt URI: the socket to dial and the
// driver name to open on it.
type libvirtEndpoint struct {
	URI    string // as given, for messages
	Socket string
	Name   string // qemu:///system
}

// parseLibvirtURI accepts the local QEMU system URIs: qemu:///system and
// qemu+unix:///system, optionally with ?socket=PATH. Without a socket,
// the modular daemon's socket in dir is used when it exists (as libvirt's
// own client does), else the monolithic libvirtd's.
func parseLibvirtURI(uri, dir string) (libvirtEndpoint, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return libvirtEndpoint{}, fmt.Errorf("--libvirt %q: %w", uri, err)
	}
	if (u.Scheme != "qemu" && u.Scheme != "qemu+unix") || u.Host != "" || u.User != nil || u.Path != "/system" {
		return libvirtEndpoint{}, fmt.Errorf("--libvirt %q: only the local system driver is supported (qemu:///system, qemu+unix:///system?socket=PATH)", uri)
	}
	ep := libvirtEndpoint{URI: uri, Name: LibvirtSystemURI}
	for k, v := range u.Query() {
		if k != "socket" || len(v) != 1 || v[0] == "" {
			return libvirtEndpoint{}, fmt.Errorf("--libvirt %q: unsupported parameter %q (only socket=PATH)", uri, k)
		}
		ep.Socket = v[0]
	}
	if ep.Socket == "" {
		ep.Socket = systemSocket(dir)
	}
	return ep, nil
}

// systemSocket is the socket of qemu:///system in dir: virtqemud's when
// it exists, else libvirtd's.
func systemSocket(dir string) string {
	if st, err := os.Stat(filepath.Join(dir, "virtqemud-sock")); err == nil && st.Mode().Type() == os.ModeSocket {
		return filepath.Join(dir, "virtqemud-sock")
	}
	return filepath.Join(dir, "libvirt-sock")
}

// LibvirtSystemAvailable reports whether qemu:///system has a socket on
// this host, which makes --libvirt qemu:///system the default source.
func LibvirtSystemAvailable() bool {
	st, err := os.Stat(systemSocket(libvirtSocketDir))
	return err == nil && st.Mode().Type() == os.ModeSocket
}

// CheckLibvirtURI says what is wrong with a --libvirt URI, or nil.
func CheckLibvirtURI(uri string) error {
	_, err := parseLibvirtURI(uri, libvirtSocketDir)
	return err
}

// libvirtSource lists the running domains of one libvirt URI.
type libvirtSource struct {
	ep  libvirtEndpoint
	err error // a bad URI, reported by Targets
}

// NewLibvirtSource returns the source of the running domains of uri
// (qemu:///system, or qemu+unix:///system?socket=PATH). Each domain's
// guest agent is reached through libvirt's agent passthrough
// (virDomainQemuAgentCommand), over a connection of its own; that needs
// a read-write connection: root, the libvirt group, or polkit's
// org.libvirt.unix.manage. libvirt notes each use in the domain's log
// ("tainted: custom-ga-command"); nothing is changed in the guest.
func NewLibvirtSource(uri string) Source {
	ep, err := parseLibvirtURI(uri, libvirtSocketDir)
	return &libvirtSource{ep: ep, err: err}
}

// Name names the source in a report's source errors.
func (s *libvirtSource) Name() string { return "libvirt" }

// Targets lists the running domains, with each one's agent channel state
// and NIC networks from its live XML.
func (s *libvirtSource) Targets(ctx context.Context) ([]Target, error) {
	if s.err != nil {
		return nil, s.err
	}
	c, err := dialLibvirt(ctx, s.ep.Socket, s.ep.Name)
	var de *libvirtDialError
	if errors.As(err, &de) {
		return nil, fmt.Errorf("%s: %w", s.ep.URI, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s (%s): %w", s.ep.URI, s.ep.Socket, err)
	}
	defer c.close()
	var doms []libvirt.Domain
	err = c.do(ctx, "list domains", func() (err error) {
		doms, _, err = c.l.ConnectListAllDomains(1, libvirt.ConnectListDomainsRunning)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.ep.URI, err)
	}
	if len(doms) > maxDomains {
		return nil, fmt.Errorf("%s: libvirt listed %d domains, more than %d", s.ep.URI, len(doms), maxDomains)
	}
	out := make([]Target, 0, len(doms))
	for _, d := range doms {
		t, ok, err := s.target(ctx, c, d)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// target reads one domain's XML. A domain that stopped since the listing
// is left out; one whose XML cannot be read is unreachable with the
// reason.
func (s *libvirtSource) target(ctx context.Context, c *lvConn, d libvirt.Domain) (Target, bool, error) {
	t := Target{Name: d.Name, Source: "libvirt"}
	var x string
	err := c.do(ctx, "domain XML", func() (err error) {
		x, err = c.l.DomainGetXMLDesc(d, 0)
		return err
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return Target{}, false, fmt.Errorf("%s: %w", s.ep.URI, err)
	case libvirt.IsNotFound(err):
		return Target{}, false, nil
	case err != nil:
		t.Unreachable = "libvirt: " + OneLine(err.Error(), 300)
		return t, true, nil
	}
	info, err := parseDomainXML(d.Name, []byte(x))
	if err != nil {
		t.Unreachable = "libvirt: " + OneLine(err.Error(), 300)
		return t, true, nil
	}
	t.Networks, t.Unreachable = info.Networks, info.Unreachable
	if t.Unreachable == "" {
		t.Dial = func(ctx context.Context) (Agent, error) { return s.dialAgent(ctx, d) }
	}
	return t, true, nil
}

// dialAgent opens the connection one domain's survey uses.
func (s *libvirtSource) dialAgent(ctx context.Context, d libvirt.Domain) (Agent, error) {
	c, err := dialLibvirt(ctx, s.ep.Socket, s.ep.Name)
	if err != nil {
		return nil, err
	}
	return &libvirtAgent{ep: s.ep, dom: d, conn: c}, nil
}

// libvirtAgent runs guest-agent commands through
// virDomainQemuAgentCommand. A call cut short by its deadline closes the
// connection; the next call dials again (ReadFile's guest-file-close
// still runs after its caller's deadline).
type libvirtAgent struct {
	ep   libvirtEndpoint
	dom  libvirt.Domain
	mu   sync.Mutex
	conn *lvConn
}

// Exec runs cmd with args and decodes the reply's "return" into result,
// as qga.Client does. The agent's own errors come back from libvirt as
// text; they are returned as *qga.Error (see agentError).
func (a *libvirtAgent) Exec(ctx context.Context, cmd string, args, result any) error {
	if qga.SendsNoReply(cmd) {
		return qga.ErrNoReply
	}
	req, err := json.Marshal(struct {
		Execute   string `json:"execute"`
		Arguments any    `json:"arguments,omitempty"`
	}{cmd, args})
	if err != nil {
		return fmt.Errorf("qga: %s: %w", cmd, err)
	}
	ctx, cancel := withDefaultTimeout(ctx, qga.DefaultTimeout)
	defer cancel()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn == nil {
		if a.conn, err = dialLibvirt(ctx, a.ep.Socket, a.ep.Name); err != nil {
			return err
		}
	}
	var reply libvirt.OptString
	err = a.conn.do(ctx, cmd, func() (err error) {
		reply, err = a.conn.l.QEMUDomainAgentCommand(a.dom, string(req), agentTimeout(ctx), 0)
		return err
	})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, libvirt.ErrInterrupted) {
			a.conn.raw.Close()
			a.conn = nil
		}
		return agentError(cmd, err)
	}
	if len(reply) != 1 {
		return fmt.Errorf("qga: %s: libvirt returned no reply", cmd)
	}
	return decodeAgentReply(cmd, []byte(reply[0]), result)
}

// Close closes the libvirt connection.
func (a *libvirtAgent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn == nil {
		return nil
	}
	err := a.conn.close()
	a.conn = nil
	return err
}

// agentTimeout is libvirt's own bound on the agent command, in whole
// seconds, from ctx's deadline: libvirt then gives up on the agent before
// the connection is closed under it.
func agentTimeout(ctx context.Context) int32 {
	dl, ok := ctx.Deadline()
	if !ok {
		return int32(qga.DefaultTimeout / time.Second)
	}
	s := math.Ceil(time.Until(dl).Seconds())
	return int32(max(1, min(s, 3600)))
}

// decodeAgentReply decodes the agent's reply as libvirt passes it on:
// the whole {"return": ...} object. libvirt turns {"error": ...} into a
// libvirt error, but an answer with it is decoded the same way.
func decodeAgentReply(cmd string, b []byte, result any) error {
	if len(b) > qga.MaxReplySize {
		return fmt.Errorf("qga: %s: reply longer than %d bytes", cmd, qga.MaxReplySize)
	}
	var r struct {
		Return json.RawMessage `json:"return"`
		Error  *qga.Error      `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("qga: %s: bad reply %q: %w", cmd, clip(b), err)
	}
	if r.Error != nil {
		return r.Error
	}
	if r.Return == nil {
		return fmt.Errorf("qga: %s: reply has neither return nor error: %q", cmd, clip(b))
	}
	if result != nil {
		if err := json.Unmarshal(r.Return, result); err != nil {
			return fmt.Errorf("qga: %s: decode return: %w", cmd, err)
		}
	}
	return nil
}

// agentError maps a libvirt error of virDomainQemuAgentCommand to what
// qga.Client would have returned, so that a survey classifies both
// transports alike:
//   - the agent's error reply ("unable to execute QEMU agent command
//     'CMD': DESC", VIR_ERR_INTERNAL_ERROR or, in newer libvirt,
//     VIR_ERR_AGENT_COMMAND_FAILED) is a *qga.Error. libvirt keeps only
//     the description, so the class is CommandNotFound when the
//     description says the command is disabled or unknown (qemu-ga's
//     words, or libvirt's for a reply without a description), else
//     GenericError;
//   - "guest agent is not connected" wraps ErrAgentNotConnected;
//   - the agent disappearing mid-command, and libvirtd going away
//     mid-call (go-libvirt's ErrInterrupted), wrap io.ErrUnexpectedEOF,
//     as a dropped agent socket does;
//   - libvirt's own agent timeouts (VIR_ERR_AGENT_UNRESPONSIVE "not
//     available for now", VIR_ERR_AGENT_COMMAND_TIMEOUT) wrap
//     context.DeadlineExceeded.
func agentError(cmd string, err error) error {
	if errors.Is(err, libvirt.ErrInterrupted) {
		// libvirtd went away mid-call: a dropped connection.
		return fmt.Errorf("qga: %s: libvirt closed the connection: %w", cmd, io.ErrUnexpectedEOF)
	}
	var le libvirt.Error
	if !errors.As(err, &le) {
		return fmt.Errorf("qga: %s: %w", cmd, err)
	}
	msg := OneLine(le.Message, 300)
	switch libvirt.ErrorNumber(le.Code) {
	case libvirt.ErrInternalError, libvirt.ErrAgentCommandFailed:
		const marker = "unable to execute QEMU agent command '"
		i := strings.Index(msg, marker)
		if i < 0 {
			break
		}
		rest := msg[i+len(marker):]
		if j := strings.Index(rest, "': "); j >= 0 {
			desc := rest[j+3:]
			return &qga.Error{Class: agentErrorClass(desc), Desc: desc}
		}
		return fmt.Errorf("qga: %s: %s", cmd, msg)
	case libvirt.ErrAgentUnresponsive, libvirt.ErrAgentCommandTimeout, libvirt.ErrOperationTimeout:
		low := strings.ToLower(msg)
		switch {
		case strings.Contains(low, "not connected"):
			return fmt.Errorf("qga: %s: %w", cmd, notConnected{msg})
		case strings.Contains(low, "disappeared"):
			return fmt.Errorf("qga: %s: %s: %w", cmd, msg, io.ErrUnexpectedEOF)
		}
		// "Guest agent not available for now" is libvirt's word for its
		// own timeout, as is "didn't respond to synchronization".
		return fmt.Errorf("qga: %s: %s: %w", cmd, msg, context.DeadlineExceeded)
	}
	return fmt.Errorf("qga: %s: libvirt: %s", cmd, msg)
}

// agentErrorClass guesses the QMP error class libvirt dropped: qemu-ga
// reports a command its RPC filter blocks, or does not know, with class
// CommandNotFound.
func agentErrorClass(desc string) string {
	d := strings.ToLower(desc)
	if strings.Contains(d, "has been disabled") || strings.Contains(d, "has not been found") || strings.Contains(d, "command not found") {
		return "CommandNotFound"
	}
	return "GenericError"
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
