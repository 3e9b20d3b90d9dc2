package networkconfig

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
)

// FuzzParseDhclientLeases: the last lease for the interface is the one in
// force, and leases of other interfaces change nothing.
func FuzzParseDhclientLeases(f *testing.F) {
	f.Add([]byte("lease {\n  interface \"eth0\";\n  fixed-address 192.0.2.1;\n  option routers 192.0.2.254;\n  option domain-name-servers 192.0.2.53,192.0.2.54;\n}\n"), "eth0")
	f.Add([]byte("lease {\n interface \"eth1\";\n"), "eth1")
	f.Fuzz(func(t *testing.T, b []byte, iface string) {
		if iface == "" || strings.ContainsAny(iface, "\" \t\r\n\v\f;{}\u0085\u00a0") || strings.ContainsFunc(iface, func(r rune) bool { return r > 0x7f }) {
			iface = "eth0"
		}
		l, ok := ParseDhclientLeases("f", b, iface)
		if ok && l.File != "f" {
			t.Fatalf("lease %+v does not name its file", l)
		}
		if !ok && !reflect.DeepEqual(l, Lease{}) {
			t.Fatalf("values %+v without a lease", l)
		}
		// Another interface's lease changes nothing, once any block b
		// leaves open is closed.
		closed := append(append([]byte(nil), b...), "\n}\n"...)
		lc, okc := ParseDhclientLeases("f", closed, iface)
		lo, oko := ParseDhclientLeases("f", []byte(string(closed)+"lease {\n interface \"x"+iface+"\";\n fixed-address 198.51.100.1;\n}\n"), iface)
		if oko != okc || !reflect.DeepEqual(lo, lc) {
			t.Fatalf("another interface's lease changed %+v to %+v", lc, lo)
		}
		mine := []byte(string(closed) + "lease {\n interface \"" + iface + "\";\n fixed-address 203.0.113.9;\n option routers 203.0.113.1;\n}\n")
		lm, okm := ParseDhclientLeases("f", mine, iface)
		if !okm || lm.Address != netip.MustParseAddr("203.0.113.9") || !reflect.DeepEqual(lm.Routers, []netip.Addr{netip.MustParseAddr("203.0.113.1")}) || lm.DNS != nil {
			t.Fatalf("the last lease is not the one in force: %+v, %v", lm, okm)
		}
	})
}

// FuzzParseEnvLease: problems point into the input, addresses are valid,
// and a later ADDRESS= line that systemd reads as one wins.
func FuzzParseEnvLease(f *testing.F) {
	f.Add([]byte("# This is private data. Do not parse.\nADDRESS=192.0.2.10\nROUTER=192.0.2.1\nDNS=192.0.2.53 192.0.2.54\n"))
	f.Add([]byte("ADDRESS\nDNS=x,,192.0.2.1;\x00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, probs := ParseEnvLease("f", b)
		n := len(lines(b))
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || p.File != "f" || strings.Contains(p.String(), "\n") {
				t.Fatalf("problem %q outside the %d-line input", p, n)
			}
		}
		for _, a := range append(append([]netip.Addr{}, l.Routers...), l.DNS...) {
			if !a.IsValid() {
				t.Fatalf("invalid address in %+v", l)
			}
		}
		// Appending an ADDRESS= line: where systemd's reading sees it as
		// the last assignment (not inside an open quote, not in a file it
		// refuses), it is the lease's address and nothing else moves.
		withAddr := append(append([]byte(nil), b...), "\nADDRESS=203.0.113.5\n"...)
		more, _ := ParseEnvLease("f", withAddr)
		vars, _ := envfile.Parse("f", withAddr, envfile.Systemd)
		if vars["ADDRESS"].Value != "203.0.113.5" {
			if more.Address == netip.MustParseAddr("203.0.113.5") {
				t.Fatalf("lease took ADDRESS= that systemd does not read: %+v", more)
			}
			return
		}
		if more.Address != netip.MustParseAddr("203.0.113.5") || !reflect.DeepEqual(more.Routers, l.Routers) || !reflect.DeepEqual(more.DNS, l.DNS) {
			t.Fatalf("a last ADDRESS= line gave %+v from %+v", more, l)
		}
	})
}
