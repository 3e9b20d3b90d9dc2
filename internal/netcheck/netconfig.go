package netcheck

import (
	"cmp"
	"net"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/netplan"
	"github.com/guestcheck/guestcheck/internal/guestfile/networkd"
	"github.com/guestcheck/guestcheck/internal/guestfile/nmconn"
	"github.com/guestcheck/guestcheck/internal/guestfile/problem"
	"github.com/guestcheck/guestcheck/internal/netconf"
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
// one MAC address.
type MACBinding struct {
	MAC  net.HardwareAddr
	At   string // "file:line"
	Kind string // what kind of binding, for messages
	Name string // the interface the configuration is for, when it says
}

// ReadNetworkConfig reads and parses every network configuration file
// network-identity judges, through the one network configuration reader.
func ReadNetworkConfig(root fs.Reader) NetworkConfig {
	return NetworkConfigOf(netconf.ReadFacts(root))
}

// NetworkConfigOf takes what network-identity judges from the guest's
// network configuration files: every netplan, networkd and
// NetworkManager file, ifcfg's HWADDR= and udev's persistent-net rules.
func NetworkConfigOf(f netconf.Facts) NetworkConfig {
	c := NetworkConfig{NetplanRendered: f.NetplanRendered}
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
		if i.IfaceOK && i.Iface.MAC != nil {
			c.Bindings = append(c.Bindings, MACBinding{MAC: i.Iface.MAC.MAC, At: i.Iface.MAC.At, Kind: "ifcfg HWADDR", Name: i.Iface.Name})
		}
	}
	if u := f.PersistentNet; u.Use(&c.Unreadable) {
		c.Problems = append(c.Problems, u.Problems...)
		for _, r := range u.Rules {
			c.Bindings = append(c.Bindings, MACBinding{MAC: r.MAC, At: r.At, Kind: "udev 70-persistent-net.rules", Name: r.Name})
		}
	}
	for _, d := range netplan.Merge(c.Netplan).Devices {
		if d.Match != nil && d.Match.MAC != nil {
			c.Bindings = append(c.Bindings, MACBinding{MAC: d.Match.MAC, At: d.Match.MACAt, Kind: "netplan match: macaddress", Name: cmp.Or(d.Name(), d.ID)})
		}
	}
	return c
}

// addNetworkd takes a .network or .link unit's [Match] MACAddress=.
func (c *NetworkConfig) addNetworkd(u netconf.Unit) {
	c.Problems = append(c.Problems, u.Problems...)
	kind, match, name := "systemd-networkd [Match] MACAddress=", networkd.Match{}, ""
	if strings.HasSuffix(u.Path, ".link") {
		l, lprobs := networkd.ParseLink(netconf.UnitOf(u.INI))
		c.Problems = append(c.Problems, netconf.FromParser(lprobs)...)
		kind, match, name = "systemd .link [Match] MACAddress=", l.Match, cmp.Or(l.Name, matchLabel(l.Match))
	} else {
		n, nprobs := networkd.ParseNetwork(netconf.UnitOf(u.INI))
		c.Problems = append(c.Problems, netconf.FromParser(nprobs)...)
		c.Networkd = append(c.Networkd, n)
		match, name = n.Match, matchLabel(n.Match)
	}
	for _, m := range match.MACs {
		c.Bindings = append(c.Bindings, MACBinding{MAC: m.MAC, At: m.At, Kind: kind, Name: name})
	}
}

// addNM takes a NetworkManager profile and its mac-address.
func (c *NetworkConfig) addNM(u netconf.Unit) {
	nm, nprobs := nmconn.Parse(netconf.KeyfileOf(u.INI))
	c.Problems = append(append(c.Problems, u.Problems...), netconf.FromParser(nprobs)...)
	c.NM = append(c.NM, nm)
	if nm.MAC != nil {
		c.Bindings = append(c.Bindings, MACBinding{MAC: nm.MAC.MAC, At: nm.MAC.At, Kind: "NetworkManager mac-address", Name: cmp.Or(nm.InterfaceName, nm.ID)})
	}
}

// matchLabel names the interfaces a [Match] is about, for messages.
func matchLabel(m networkd.Match) string { return strings.Join(m.Names, " ") }
