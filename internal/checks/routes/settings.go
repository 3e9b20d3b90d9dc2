package routes

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// Settings are the routes section of guestcheck.yaml.
type Settings struct {
	// DefaultInterface is the interface name or MAC address that must hold
	// the winning default route; empty means "the interface holding the
	// first NIC's address".
	DefaultInterface string
	// Targets are extra addresses to report the kernel's route to.
	Targets []string
}

var settings = config.Settings[Settings]{
	Name: "routes",
	Help: "Expectations of the routes check: the NIC (name or MAC) that must carry the winning default route, by default the first NIC, and extra addresses to report the kernel's route to.",
	Keys: []config.Field[Settings]{
		config.Text("default_interface", "interface name or MAC address", "the first NIC",
			"The interface that must carry the winning default route.",
			func(s *Settings, v string) { s.DefaultInterface = v }).WithExample("enp1s0"),
		config.List("targets", "list of addresses", "",
			"Extra IP addresses to report the kernel's route to. Names are refused: resolving them would send traffic.",
			func(s *Settings, v []string) { s.Targets = v }).WithExample("[203.0.113.10]"),
	},
	// Each entry of targets must be an IP address.
	Issues: func(s Settings) []config.Issue {
		var out []config.Issue
		for i, t := range s.Targets {
			if _, err := target(t); err != nil {
				out = append(out, config.Issue{Path: fmt.Sprintf("targets[%d]", i),
					Msg: err.Error() + "; write an address such as 192.0.2.10 or 2001:db8::1 (names are not resolved, so that the check sends no traffic)"})
			}
		}
		return out
	},
}

// target parses a routes.targets entry. Only addresses are taken:
// resolving a name would send traffic, which the routes check never does.
// The loader refuses a bad one through Issues, and the check parses with
// it.
func target(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%q is not an IP address", s)
	}
	return a, nil
}
