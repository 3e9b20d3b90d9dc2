package prove

import "fmt"

// DefaultNetworkConfig is the NoCloud network-config a clone gets when
// --network-config is not given. Under restrict=on, QEMU's DHCP server
// (libslirp) leaves the router and DNS options out of its offers, so a
// DHCP client gets an address and no default route, and guestcheck's
// routes check fails every clone of a healthy template with
// routes-no-default (seen on the Debian 12 template of test/vm). A cloud
// configures the NIC from its metadata instead, and so does this: version
// 1, the NIC by the clone's MAC (cloud-init names it eth0), the address
// QEMU's DHCP server would have handed out, and a default route through
// QEMU's host. No nameserver: the template's resolver stays as it is.
func DefaultNetworkConfig(c Clone) []byte {
	return fmt.Appendf(nil, `version: 1
config:
  - type: physical
    name: eth0
    mac_address: "%s"
    subnets:
      - type: static
        address: %s/%d
        routes:
          - {network: 0.0.0.0/0, gateway: %s}
`, c.MAC, c.own(), c.Net.Bits(), c.host(2))
}
