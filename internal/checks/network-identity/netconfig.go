package networkidentity

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/netconf"
	"github.com/guestcheck/guestcheck/internal/parse/netplan"
	"github.com/guestcheck/guestcheck/internal/parse/networkd"
	"github.com/guestcheck/guestcheck/internal/parse/nmconn"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// NetworkConfig is the guest's network configuration as far as
// network-identity judges it: DHCP client identity and MAC bindings.
type NetworkConfig struct {
	Netplan         []netplan.File // in netplan's merge order
	Networkd        []networkd.Network
	NetworkdConf    networkd.Conf
	NM              []nmconn.Connection
	Bindings        []MACBinding
	Problems        []problem.Problem
	Unreadable      []string // files that exist but could not be read
	NetplanRendered bool     // /run/systemd/network holds netplan's output
	// Live and IsRoot are Env's, for the wording of fixes; the caller
	// sets them (ReadNetworkConfig reads files only).
	Live, IsRoot bool
}

// MACBinding is network configuration that applies only to the NIC with
// one MAC address; netconf reads them (MACBindings), for this check and
// for the report's identity alike.
type MACBinding = netconf.MACBinding

// ReadNetworkConfig reads and parses every network configuration file
// network-identity judges, through the one network configuration reader.
func ReadNetworkConfig(root fs.Reader) NetworkConfig {
	return NetworkConfigOf(netconf.ReadFacts(root))
}

// NetworkConfigOf takes what network-identity judges from the guest's
// network configuration files: every netplan, networkd and
// NetworkManager file, ifcfg's HWADDR= and udev's persistent-net rules.
// The MAC bindings are netconf.MACBindings'.
func NetworkConfigOf(f netconf.Facts) NetworkConfig {
	c := NetworkConfig{NetplanRendered: f.NetplanRendered, Bindings: netconf.MACBindings(f)}
	for _, n := range f.Netplan {
		if n.Use(&c.Unreadable) {
			c.Netplan = append(c.Netplan, n.File)
			c.Problems = append(c.Problems, n.Problems...)
		}
	}
	for _, u := range f.NetworkdConf {
		if u.Use(&c.Unreadable) {
			c.Problems = append(c.Problems, u.Problems...)
			c.NetworkdConf.Apply(netconf.UnitOf(u.INI))
		}
	}
	for _, u := range f.Networkd {
		if !strings.HasSuffix(u.Path, ".netdev") && u.Use(&c.Unreadable) {
			c.addNetworkd(u)
		}
	}
	for _, u := range f.NM {
		if u.Use(&c.Unreadable) {
			c.addNM(u)
		}
	}
	for _, i := range f.Ifcfg {
		if !i.Use(&c.Unreadable) {
			continue
		}
		c.Problems = append(append(c.Problems, i.Problems...), i.IfaceProblems...)
	}
	if u := f.PersistentNet; u.Use(&c.Unreadable) {
		c.Problems = append(c.Problems, u.Problems...)
	}
	return c
}

// addNetworkd takes a .network unit, and the problems of a .link unit
// (whose only use here is its MAC binding).
func (c *NetworkConfig) addNetworkd(u netconf.Unit) {
	c.Problems = append(c.Problems, u.Problems...)
	if strings.HasSuffix(u.Path, ".link") {
		_, lprobs := networkd.ParseLink(netconf.UnitOf(u.INI))
		c.Problems = append(c.Problems, netconf.FromParser(lprobs)...)
		return
	}
	n, nprobs := networkd.ParseNetwork(netconf.UnitOf(u.INI))
	c.Problems = append(c.Problems, netconf.FromParser(nprobs)...)
	c.Networkd = append(c.Networkd, n)
}

// addNM takes a NetworkManager profile.
func (c *NetworkConfig) addNM(u netconf.Unit) {
	nm, nprobs := nmconn.Parse(netconf.KeyfileOf(u.INI))
	c.Problems = append(append(c.Problems, u.Problems...), netconf.FromParser(nprobs)...)
	c.NM = append(c.NM, nm)
}
