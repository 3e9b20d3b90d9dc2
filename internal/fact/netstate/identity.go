package netstate

import (
	"golang.org/x/sys/unix"

	"github.com/guestcheck/guestcheck/internal/fact/identity/guestid"
)

// IdentityInterfaces is the running guest's links as its identity
// reports them (guestid.Identity.Interfaces): every link but loopback, in
// kernel order, with its MAC and its addresses of global scope as CIDR.
// Tentative addresses are kept: one whose duplicate address detection
// failed is exactly what a comparison across VMs looks for.
func IdentityInterfaces(links []Link, addrs []Addr) []guestid.Interface {
	var out []guestid.Interface
	for _, l := range links {
		if l.Encap == "loopback" {
			continue
		}
		i := guestid.Interface{Name: l.Name}
		if len(l.MAC) > 0 {
			i.MAC = l.MAC.String()
		}
		for _, a := range addrs {
			ip := a.Prefix.Addr()
			if a.LinkIndex == l.Index && a.Scope == unix.RT_SCOPE_UNIVERSE && !ip.IsLinkLocalUnicast() && !ip.IsLoopback() {
				i.Addresses = append(i.Addresses, a.Prefix.String())
			}
		}
		out = append(out, i)
	}
	return out
}
