package networkconfig

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
)

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
