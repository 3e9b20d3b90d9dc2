package dhcplease

import (
	"encoding/hex"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// SDLease is what identifies the client in a systemd-networkd lease file
// (/run/systemd/netif/leases/IFINDEX; NetworkManager's internal DHCP
// client wrote the same format to internal-*.lease).
type SDLease struct {
	// ClientID is CLIENTID=, the DHCPv4 client identifier (option 61)
	// the client sent, nil when absent; ClientIDLine its line.
	ClientID     []byte
	ClientIDLine int
	// Address is ADDRESS=, the leased address, as written.
	Address string
}

// ParseSDLease parses a systemd-networkd lease file: KEY=VALUE lines,
// blank lines and # comments. A line without '=' and a CLIENTID= that is
// not hexadecimal are problems; the last assignment of a key wins.
func ParseSDLease(name string, b []byte) (SDLease, []problem.Problem) {
	var l SDLease
	var probs []problem.Problem
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			probs = append(probs, problem.At(name, i+1, "line has no '='"))
			continue
		}
		switch strings.TrimSpace(k) {
		case "CLIENTID":
			id, err := hex.DecodeString(strings.TrimSpace(v))
			if err != nil || len(id) < 2 {
				probs = append(probs, problem.At(name, i+1, "CLIENTID= is not an identifier in hexadecimal"))
				continue
			}
			l.ClientID, l.ClientIDLine = id, i+1
		case "ADDRESS":
			l.Address = strings.TrimSpace(v)
		}
	}
	return l, probs
}
