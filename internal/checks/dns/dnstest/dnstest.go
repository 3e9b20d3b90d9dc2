// Package dnstest runs fake nameservers for tests: each listens on
// 127.0.0.1 at a random port and stops when the test ends, and Redirect
// maps the documentation addresses written into fake resolv.conf files
// onto them while refusing every other destination, so that no test can
// query a real nameserver.
package dnstest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Serve answers with h on a random loopback UDP port until the test ends
// and returns the address.
func Serve(t testing.TB, h dns.HandlerFunc) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{PacketConn: pc, Handler: h}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return pc.LocalAddr().String()
}

// BlackHole reads queries and never answers.
func BlackHole(t testing.TB) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { pc.Close() })
	return pc.LocalAddr().String()
}

// Zone answers A queries from names (lower-case FQDN with the final dot ->
// IPv4) and NXDOMAIN for anything else; AAAA gets an empty NOERROR for
// known names.
func Zone(names map[string]string) dns.HandlerFunc {
	return func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		ip, ok := names[strings.ToLower(q.Name)]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNameError
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(ip)})
		}
		_ = w.WriteMsg(m)
	}
}

// ServFail answers every query with SERVFAIL.
func ServFail(w dns.ResponseWriter, r *dns.Msg) {
	m := new(dns.Msg)
	m.SetRcode(r, dns.RcodeServerFailure)
	_ = w.WriteMsg(m)
}

// Redirect is a check.Dialer that sends "addr:53" to the fake server it maps
// to and refuses anything else.
type Redirect map[string]string

// DialContext dials the fake server standing in for addr.
func (d Redirect) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	to, ok := d[addr]
	if !ok {
		return nil, fmt.Errorf("test dialer: %s is not a fake server", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, to)
}
