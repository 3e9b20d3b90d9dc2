package netconf

import (
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/nmconn"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// fuzzLines checks the invariant every parser keeps: problems point at a
// line of the input and name the file.
func fuzzLines(t *testing.T, b []byte, probs []problem.Problem) {
	n := len(lines(b))
	for _, p := range probs {
		if p.Line < 1 || p.Line > n || p.File != "f" {
			t.Fatalf("problem %q outside the %d-line input", p, n)
		}
	}
}

// FuzzNetworkdNMKeyfile fuzzes the networkd and NetworkManager layers
// over guestfile/ini (which has its own FuzzParse).
func FuzzNetworkdNMKeyfile(f *testing.F) {
	f.Add([]byte("[Match]\nMACAddress=52:54:00:12:34:56 \\\n x\n[Network]\nDHCP=yes\n"), true)
	f.Add([]byte("[ethernet]\nmac-address=82;84;0;18;52;86;\n[ipv4]\nmethod=auto\n"), false)
	f.Add([]byte("[\n]\n=\\"), true)
	f.Fuzz(func(t *testing.T, b []byte, cont bool) {
		parse := ParseKeyfile
		if cont {
			parse = ParseUnit
		}
		ini, probs := parse("f", b)
		fuzzLines(t, b, probs)
		_, uprobs := networkd.ParseNetwork(UnitOf(ini))
		fuzzLines(t, b, FromParser(uprobs))
		_, nprobs := nmconn.Parse(KeyfileOf(ini))
		fuzzLines(t, b, FromParser(nprobs))
	})
}

// lines splits b into lines as the parsers count them.
func lines(b []byte) []string {
	s := strings.Split(string(b), "\n")
	if len(s) > 0 && s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	return s
}
