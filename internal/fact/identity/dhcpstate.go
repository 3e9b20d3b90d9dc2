package identity

import (
	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

// DHCPStateItems are the catalogue items that identify the machine to
// DHCP servers by what a root holds (not by configuration): dhcpcd's
// DUID, secret and leases (dhcpcd(8) FILES: /etc up to dhcpcd 6, DBDIR
// since 7), dhclient's, systemd-networkd's, NetworkManager's and wicked's
// leases, and wicked's DUID. sealprep's dhcp-leases operation removes
// each of them.
var DHCPStateItems = []string{
	catalogue.DhcpcdDUID, catalogue.DhcpcdSecret, catalogue.DhcpcdLeases, catalogue.DhclientLeases,
	catalogue.NetworkdLeases, catalogue.NMLeases, catalogue.WickedDUID, catalogue.WickedLeases,
}

// DhcpcdDUIDPaths are the files holding the DUID dhcpcd presents ("Text
// file that holds the DUID used to identify the host", dhcpcd(8)).
var DhcpcdDUIDPaths = catalogue.Lookup(catalogue.DhcpcdDUID).Files()

// ReadDHCPState lists the DHCP client state in the root that identifies
// the machine to DHCP servers, which a sealed template must not hold
// because every clone would present it. Each entry is a guest path and
// what it is, in the catalogue's words. Regular files are listed (the
// dhcp-leases operation removes links too).
func ReadDHCPState(r fs.Reader) []string {
	var out []string
	for _, name := range DHCPStateItems {
		it := catalogue.Lookup(name)
		for _, f := range it.Find(r) {
			if f.Kind == fs.KindRegular {
				out = append(out, f.Path+" ("+it.What+")")
			}
		}
	}
	return out
}
