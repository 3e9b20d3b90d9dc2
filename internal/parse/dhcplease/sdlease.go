package dhcplease

import (
	"encoding/hex"
	"net/netip"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/envfile"
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
	// Routers and DNS are ROUTER= and DNS=, for network-config.
	Routers []netip.Addr
	DNS     []netip.Addr
}

// ParseSDLease parses a systemd-networkd lease file as networkd reads it
// back: systemd's environment-file rules (envfile's Systemd dialect:
// quotes, continuations, comments), the last assignment of a key winning.
// A line systemd rejects and a CLIENTID= that is not hexadecimal are
// problems.
func ParseSDLease(name string, b []byte) (SDLease, []problem.Problem) {
	vars, probs := envfile.Parse(name, b, envfile.Systemd)
	l := SDLease{Address: strings.TrimSpace(vars["ADDRESS"].Value),
		Routers: AddrList(vars["ROUTER"].Value), DNS: AddrList(vars["DNS"].Value)}
	if v, ok := vars["CLIENTID"]; ok {
		id, err := hex.DecodeString(strings.TrimSpace(v.Value))
		if err != nil || len(id) < 2 {
			probs = append(probs, problem.At(name, v.Line, "CLIENTID= is not an identifier in hexadecimal"))
		} else {
			l.ClientID, l.ClientIDLine = id, v.Line
		}
	}
	return l, probs
}
