package dns

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/guestcheck/guestcheck/internal/fact/netstate"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Outcome classifies the result of one DNS query.
type Outcome string

// The outcomes. A server that produced Answer, NoData or NXDomain is alive:
// it resolved the question, whatever the answer. SERVFAIL, REFUSED, a
// timeout or a network error mean it cannot resolve for this guest.
const (
	OutcomeAnswer   Outcome = "answer"   // NOERROR with at least one address
	OutcomeNoData   Outcome = "nodata"   // NOERROR, but no address of that type
	OutcomeNXDomain Outcome = "nxdomain" // the name does not exist
	OutcomeServFail Outcome = "servfail" // the server failed to resolve
	OutcomeRefused  Outcome = "refused"  // the server will not resolve for us
	OutcomeTimeout  Outcome = "timeout"  // no answer before the deadline
	OutcomeError    Outcome = "error"    // network error, malformed or other rcode
)

// Alive reports whether the outcome proves a working server.
func (o Outcome) Alive() bool {
	return o == OutcomeAnswer || o == OutcomeNoData || o == OutcomeNXDomain
}

// QueryResult is the outcome of one question (name and type) asked of one
// server, after all attempts.
type QueryResult struct {
	Name     string
	Type     string // "A" or "AAAA"
	Outcome  Outcome
	Addrs    []netip.Addr
	RTT      time.Duration // time of the last attempt, answer or not
	Attempts int
	Err      string // why it failed; empty when the server answered
}

// ServerResult gathers the queries asked of one server.
type ServerResult struct {
	Server  netstate.Server
	Queries []QueryResult
	Elapsed time.Duration // wall time of this server's whole probe
}

// Alive reports whether any query got a real answer from the server.
func (r ServerResult) Alive() bool {
	for _, q := range r.Queries {
		if q.Outcome.Alive() {
			return true
		}
	}
	return false
}

// RTT returns the fastest answer's round-trip time, or 0 when none.
func (r ServerResult) RTT() time.Duration {
	var best time.Duration
	for _, q := range r.Queries {
		if q.Outcome.Alive() && (best == 0 || q.RTT < best) {
			best = q.RTT
		}
	}
	return best
}

// Prober asks nameservers directly over UDP. It does not use net.Resolver:
// Go's resolver consults the host's /etc/hosts, nsswitch.conf and
// resolv.conf (search list, attempts, timeouts) before or around the
// server it is told to dial, so the machine's own FQDN, usually listed in
// /etc/hosts, would never reach the server under test.
type Prober struct {
	// Dialer opens the UDP sockets; nil means a plain net.Dialer. Tests
	// redirect it to servers on loopback.
	Dialer runner.Dialer
	// Timeout bounds each server's whole probe, every name and attempt
	// included, so a dead server costs exactly this long.
	Timeout time.Duration
	// Retries is how many more attempts follow a failed one; the attempts
	// share Timeout equally.
	Retries int
}

// probeMargin is left before ctx's deadline so that the caller can still
// judge and report after the probes give up.
const probeMargin = 250 * time.Millisecond

// Probe asks every server about every name (A and AAAA) in parallel and
// returns one result per server, in the order given. It returns within
// Timeout, or earlier when ctx ends.
func (p Prober) Probe(ctx context.Context, servers []netstate.Server, names []string) []ServerResult {
	budget := p.Timeout
	if budget <= 0 {
		budget = 2 * time.Second
	}
	deadline := time.Now().Add(budget)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-probeMargin).Before(deadline) {
		deadline = dl.Add(-probeMargin)
	}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()

	out := make([]ServerResult, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		out[i] = ServerResult{Server: s, Queries: make([]QueryResult, 0, 2*len(names))}
		qs := make([]QueryResult, 2*len(names))
		start := time.Now()
		var swg sync.WaitGroup
		for j, n := range names {
			for k, t := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
				swg.Add(1)
				go func() {
					defer swg.Done()
					qs[2*j+k] = p.query(pctx, s.Addr, n, t)
				}()
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			swg.Wait()
			out[i].Queries = qs
			out[i].Elapsed = time.Since(start)
		}()
	}
	wg.Wait()
	return out
}

// query asks one question with up to 1+Retries attempts, each getting an
// equal share of the time left before ctx's deadline.
func (p Prober) query(ctx context.Context, server netip.Addr, name string, t dnsmessage.Type) QueryResult {
	res := QueryResult{Name: name, Type: typeName(t), Outcome: OutcomeTimeout, Err: "no attempt: the deadline had already passed"}
	attempts := 1 + max(p.Retries, 0)
	for i := 0; i < attempts; i++ {
		dl, _ := ctx.Deadline()
		left := time.Until(dl)
		if left <= 0 || ctx.Err() != nil {
			break
		}
		actx, cancel := context.WithTimeout(ctx, left/time.Duration(attempts-i))
		r := p.exchange(actx, server, name, t)
		cancel()
		r.Attempts = i + 1
		res = r
		if r.Outcome.Alive() {
			break
		}
	}
	return res
}

// exchange sends one query and waits for the matching response.
func (p Prober) exchange(ctx context.Context, server netip.Addr, name string, t dnsmessage.Type) QueryResult {
	res := QueryResult{Name: name, Type: typeName(t)}
	fail := func(o Outcome, err string) QueryResult {
		res.Outcome, res.Err = o, err
		return res
	}
	q, err := question(name, t)
	id := uint16(rand.Uint32())
	var packed []byte
	if err == nil {
		msg := dnsmessage.Message{Header: dnsmessage.Header{ID: id, RecursionDesired: true}, Questions: []dnsmessage.Question{q}}
		packed, err = msg.Pack()
	}
	if err != nil {
		// Only the name can make a query unbuildable (a label over 63 bytes).
		return fail(OutcomeError, fmt.Sprintf("invalid name %q: %v", name, err))
	}

	var d runner.Dialer = p.Dialer
	if d == nil {
		d = &net.Dialer{}
	}
	start := time.Now()
	conn, err := d.DialContext(ctx, "udp", netip.AddrPortFrom(server, 53).String())
	if err != nil {
		res.RTT = time.Since(start)
		return fail(classifyNetErr(ctx, err))
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// A cancelled context without a deadline must still unblock the read.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := conn.Write(packed); err != nil {
		res.RTT = time.Since(start)
		return fail(classifyNetErr(ctx, err))
	}
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		res.RTT = time.Since(start)
		if err != nil {
			return fail(classifyNetErr(ctx, err))
		}
		h, addrs, ok, perr := parseResponse(buf[:n], id, q)
		if !ok {
			continue // not our answer (late reply to an earlier attempt, or junk)
		}
		if perr != nil {
			return fail(OutcomeError, "malformed response: "+perr.Error())
		}
		res.Addrs = addrs
		switch h.RCode {
		case dnsmessage.RCodeSuccess:
			res.Outcome = OutcomeAnswer
			if len(addrs) == 0 {
				res.Outcome = OutcomeNoData
			}
		case dnsmessage.RCodeNameError:
			res.Outcome = OutcomeNXDomain
		case dnsmessage.RCodeServerFailure:
			return fail(OutcomeServFail, "server answered SERVFAIL")
		case dnsmessage.RCodeRefused:
			return fail(OutcomeRefused, "server answered REFUSED")
		default:
			return fail(OutcomeError, "server answered "+rcodeName(h.RCode))
		}
		return res
	}
}

// parseResponse decodes b when it answers question q with id. ok is false
// for datagrams that are not that answer; err reports a matching answer
// whose records cannot be decoded.
func parseResponse(b []byte, id uint16, q dnsmessage.Question) (h dnsmessage.Header, addrs []netip.Addr, ok bool, err error) {
	var p dnsmessage.Parser
	h, err = p.Start(b)
	if err != nil || !h.Response || h.ID != id {
		return h, nil, false, nil
	}
	got, err := p.Question()
	if err != nil || got.Type != q.Type || !strings.EqualFold(got.Name.String(), q.Name.String()) {
		return h, nil, false, nil
	}
	if err := p.SkipAllQuestions(); err != nil {
		return h, nil, true, err
	}
	for {
		ah, err := p.AnswerHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return h, addrs, true, nil
		}
		if err != nil {
			if h.Truncated {
				return h, addrs, true, nil // keep what fit
			}
			return h, addrs, true, err
		}
		switch ah.Type {
		case dnsmessage.TypeA:
			r, err := p.AResource()
			if err != nil {
				return h, addrs, true, err
			}
			addrs = append(addrs, netip.AddrFrom4(r.A))
		case dnsmessage.TypeAAAA:
			r, err := p.AAAAResource()
			if err != nil {
				return h, addrs, true, err
			}
			addrs = append(addrs, netip.AddrFrom16(r.AAAA))
		default:
			if err := p.SkipAnswer(); err != nil {
				return h, addrs, true, err
			}
		}
	}
}

// classifyNetErr turns a socket error into an outcome and a short reason.
func classifyNetErr(ctx context.Context, err error) (Outcome, string) {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return OutcomeError, "connection refused: nothing listens on port 53"
	case ctx.Err() != nil, errors.As(err, &ne) && ne.Timeout():
		return OutcomeTimeout, "no answer before the deadline"
	}
	return OutcomeError, err.Error()
}

func typeName(t dnsmessage.Type) string {
	if t == dnsmessage.TypeAAAA {
		return "AAAA"
	}
	return "A"
}

func rcodeName(c dnsmessage.RCode) string {
	return strings.TrimPrefix(c.String(), "RCode")
}

// ValidName reports why name cannot be asked in a DNS query (a label
// over 63 bytes, over 255 in all, an empty label), or nil.
func ValidName(name string) error {
	if strings.TrimSuffix(name, ".") == "" {
		return errors.New("empty name")
	}
	q, err := question(name, dnsmessage.TypeA)
	if err == nil {
		m := dnsmessage.Message{Questions: []dnsmessage.Question{q}}
		_, err = m.Pack()
	}
	return err
}

// question builds the question asked for name, always fully qualified so
// that no search list applies.
func question(name string, t dnsmessage.Type) (dnsmessage.Question, error) {
	n, err := dnsmessage.NewName(strings.TrimSuffix(name, ".") + ".")
	if err != nil {
		return dnsmessage.Question{}, err
	}
	return dnsmessage.Question{Name: n, Type: t, Class: dnsmessage.ClassINET}, nil
}
