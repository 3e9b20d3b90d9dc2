package dns

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/guestcheck/guestcheck/internal/checks/dns/dnstest"
	"github.com/guestcheck/guestcheck/internal/fact/netstate"
)

// closedPort returns a loopback UDP address nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := pc.LocalAddr().String()
	pc.Close()
	return a
}

func servers(addrs ...string) []netstate.Server {
	var out []netstate.Server
	for _, a := range addrs {
		out = append(out, netstate.Server{Addr: netip.MustParseAddr(a), Source: "test"})
	}
	return out
}

func TestProberOutcomes(t *testing.T) {
	d := dnstest.Redirect{
		"192.0.2.53:53":    dnstest.Serve(t, dnstest.Zone(map[string]string{"host.example.org.": "192.0.2.80"})),
		"198.51.100.53:53": dnstest.BlackHole(t),
		"203.0.113.53:53":  dnstest.Serve(t, dnstest.ServFail),
		"192.0.2.54:53":    closedPort(t),
	}
	p := Prober{Dialer: d, Timeout: 400 * time.Millisecond, Retries: 1}
	start := time.Now()
	res := p.Probe(context.Background(), servers("192.0.2.53", "198.51.100.53", "203.0.113.53", "192.0.2.54", "203.0.113.99"),
		[]string{"host.example.org", "missing.example.org."})
	if el := time.Since(start); el > 10*p.Timeout {
		t.Fatalf("probe took %v with a %v budget", el, p.Timeout)
	}
	type want struct {
		alive    bool
		outcomes string // A, AAAA for each name
		attempts int    // of the first query
	}
	wants := []want{
		{true, "answer nodata nxdomain nxdomain", 1},
		{false, "timeout timeout timeout timeout", 2},
		{false, "servfail servfail servfail servfail", 2},
		{false, "error error error error", 2},
		{false, "error error error error", 2},
	}
	for i, w := range wants {
		r := res[i]
		var got []string
		for _, q := range r.Queries {
			got = append(got, string(q.Outcome))
		}
		if r.Alive() != w.alive || strings.Join(got, " ") != w.outcomes || r.Queries[0].Attempts != w.attempts {
			t.Errorf("server %s: alive=%v outcomes=%v attempts=%d, want %+v (%+v)", r.Server.Addr, r.Alive(), got, r.Queries[0].Attempts, w, r.Queries)
		}
	}
	if q := res[0].Queries[0]; len(q.Addrs) != 1 || q.Addrs[0] != netip.MustParseAddr("192.0.2.80") || q.Type != "A" || q.Name != "host.example.org" {
		t.Errorf("answer = %+v", q)
	}
	if res[0].RTT() <= 0 || res[1].RTT() != 0 {
		t.Errorf("RTT = %v, %v", res[0].RTT(), res[1].RTT())
	}
	if e := res[3].Queries[0].Err; !strings.Contains(e, "connection refused") {
		t.Errorf("closed port error = %q", e)
	}
	if e := res[4].Queries[0].Err; !strings.Contains(e, "not a fake server") {
		t.Errorf("unmapped server error = %q", e)
	}
	if e := res[2].Queries[0].Err; e != "server answered SERVFAIL" {
		t.Errorf("servfail error = %q", e)
	}
}

// dropFirst answers each question only the second time it is asked.
func dropFirst(t testing.TB) string {
	var mu sync.Mutex
	seen := map[string]bool{}
	ok := dnstest.Zone(map[string]string{"host.example.org.": "192.0.2.80"})
	return dnstest.Serve(t, func(w mdns.ResponseWriter, r *mdns.Msg) {
		k := r.Question[0].String()
		mu.Lock()
		first := !seen[k]
		seen[k] = true
		mu.Unlock()
		if !first {
			ok(w, r)
		}
	})
}

func TestProberRetries(t *testing.T) {
	for _, retries := range []int{0, 1} {
		d := dnstest.Redirect{"192.0.2.53:53": dropFirst(t)}
		p := Prober{Dialer: d, Timeout: 600 * time.Millisecond, Retries: retries}
		r := p.Probe(context.Background(), servers("192.0.2.53"), []string{"host.example.org"})[0]
		if r.Alive() != (retries == 1) || r.Queries[0].Attempts != retries+1 {
			t.Errorf("retries=%d: alive=%v queries=%+v", retries, r.Alive(), r.Queries)
		}
	}
}

// TestProberIgnoresForeignAnswers: a reply with another ID or another
// question (a late answer to an earlier attempt, or spoofing) is skipped.
func TestProberIgnoresForeignAnswers(t *testing.T) {
	good := dnstest.Zone(map[string]string{"host.example.org.": "192.0.2.80"})
	addr := dnstest.Serve(t, func(w mdns.ResponseWriter, r *mdns.Msg) {
		wrongID := new(mdns.Msg)
		wrongID.SetRcode(r, mdns.RcodeServerFailure)
		wrongID.Id = r.Id + 1
		_ = w.WriteMsg(wrongID)
		wrongQ := new(mdns.Msg)
		wrongQ.SetRcode(r, mdns.RcodeServerFailure)
		wrongQ.Question[0].Name = "other.example.org."
		_ = w.WriteMsg(wrongQ)
		_, _ = w.Write([]byte{1, 2, 3})
		good(w, r)
	})
	p := Prober{Dialer: dnstest.Redirect{"192.0.2.53:53": addr}, Timeout: time.Second}
	r := p.Probe(context.Background(), servers("192.0.2.53"), []string{"HOST.example.org"})[0]
	if !r.Alive() || r.Queries[0].Outcome != OutcomeAnswer || r.Queries[0].Attempts != 1 {
		t.Errorf("queries = %+v", r.Queries)
	}
}

// TestProberHonoursContext: the probe ends with ctx's deadline or
// cancellation, long before its own budget.
func TestProberHonoursContext(t *testing.T) {
	p := Prober{Dialer: dnstest.Redirect{"198.51.100.53:53": dnstest.BlackHole(t)}, Timeout: time.Minute, Retries: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	done := make(chan []ServerResult)
	go func() { done <- p.Probe(ctx, servers("198.51.100.53"), []string{"a.example.org", "b.example.org"}) }()
	select {
	case r := <-done:
		if r[0].Alive() || r[0].Queries[0].Outcome != OutcomeTimeout {
			t.Errorf("got %+v", r[0])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("probe hung past its context")
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel2() }()
	go func() { done <- p.Probe(ctx2, servers("198.51.100.53"), []string{"a.example.org"}) }()
	select {
	case r := <-done:
		if r[0].Alive() {
			t.Errorf("got %+v", r[0])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("probe ignored cancellation")
	}
}

func TestProberInvalidName(t *testing.T) {
	p := Prober{Dialer: dnstest.Redirect{}, Timeout: time.Second}
	r := p.Probe(context.Background(), servers("192.0.2.53"), []string{strings.Repeat("a", 64) + ".example.org"})[0]
	if r.Alive() || !strings.Contains(r.Queries[0].Err, "invalid name") {
		t.Errorf("got %+v", r.Queries[0])
	}
}

func FuzzParseResponse(f *testing.F) {
	m := new(mdns.Msg)
	m.SetQuestion("host.example.org.", mdns.TypeA)
	m.Id = 7
	m.Response = true
	m.Answer = []mdns.RR{&mdns.A{Hdr: mdns.RR_Header{Name: "host.example.org.", Rrtype: mdns.TypeA, Class: mdns.ClassINET}, A: net.ParseIP("192.0.2.1")}}
	b, _ := m.Pack()
	f.Add(b)
	f.Add(b[:len(b)-2])
	q, _ := question("host.example.org", dnsmessage.TypeA)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, addrs, ok, err := parseResponse(b, 7, q)
		if !ok && (addrs != nil || err != nil) {
			t.Fatalf("not ours but addrs=%v err=%v", addrs, err)
		}
	})
}
