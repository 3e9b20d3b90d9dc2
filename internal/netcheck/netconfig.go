package netcheck

import (
	"errors"
	iofs "io/fs"
	"net"
	"path"
	"slices"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/netplan"
	"github.com/guestcheck/guestcheck/internal/guestfile/networkd"
	"github.com/guestcheck/guestcheck/internal/guestfile/nmconn"
	"github.com/guestcheck/guestcheck/internal/guestfile/udevrules"
)

// NetworkConfig is the guest's network configuration as far as
// network-identity judges it: DHCP client identity and MAC bindings.
type NetworkConfig struct {
	Netplan         []netplan.File // in netplan's merge order
	Networkd        []networkd.Network
	NetworkdConf    networkd.Conf
	NM              []nmconn.Connection
	Bindings        []MACBinding
	Problems        []Problem
	Unreadable      []string // files that exist but could not be read
	NetplanRendered bool     // /run/systemd/network holds netplan's output
}

// MACBinding is network configuration that applies only to the NIC with
// one MAC address.
type MACBinding struct {
	MAC  net.HardwareAddr
	At   string // "file:line"
	Kind string // what kind of binding, for messages
	Name string // the interface the configuration is for, when it says
}

// Directories read, in increasing priority: a file in a later directory
// replaces one with the same name in an earlier one.
var (
	netplanDirs  = []string{"/lib/netplan", "/etc/netplan", "/run/netplan"}
	networkdDirs = []string{"/run/systemd/network", "/etc/systemd/network"}
	nmDirs       = []string{"/run/NetworkManager/system-connections", "/etc/NetworkManager/system-connections"}
	ifcfgDirs    = []string{"/etc/sysconfig/network-scripts", "/etc/sysconfig/network"}
)

const persistentNetRules = "/etc/udev/rules.d/70-persistent-net.rules"

// ReadNetworkConfig reads and parses every network configuration file
// network-identity judges. networkd units shipped under /usr/lib are left
// out: they are distribution defaults for containers and examples, not
// this VM's configuration.
func ReadNetworkConfig(root *fs.Root) NetworkConfig {
	var c NetworkConfig
	read := func(p string) ([]byte, bool) { return readOptional(root, p, &c.Unreadable) }

	for _, p := range overlay(root, netplanDirs, func(n string) bool { return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml") }) {
		if b, ok := read(p); ok {
			np, probs := netplan.Parse(root.Display(p), b)
			c.Netplan = append(c.Netplan, np)
			c.Problems = append(c.Problems, fromParser(probs)...)
		}
	}

	for _, p := range overlay(root, []string{"/usr/lib/systemd", "/run/systemd", "/etc/systemd"}, func(n string) bool { return n == "networkd.conf" }) {
		c.readNetworkdConf(root, p, read)
	}
	for _, p := range overlay(root, []string{"/usr/lib/systemd/networkd.conf.d", "/run/systemd/networkd.conf.d", "/etc/systemd/networkd.conf.d"},
		func(n string) bool { return strings.HasSuffix(n, ".conf") }) {
		c.readNetworkdConf(root, p, read)
	}

	for _, p := range overlay(root, networkdDirs, func(n string) bool { return strings.HasSuffix(n, ".network") || strings.HasSuffix(n, ".link") }) {
		if strings.HasPrefix(path.Base(p), "10-netplan-") {
			// netplan's own output: judged through the netplan files.
			c.NetplanRendered = true
			continue
		}
		b, ok := read(p)
		if !ok {
			continue
		}
		ini, probs := parseUnit(root.Display(p), b)
		for _, dp := range overlay(root, []string{p + ".d"}, func(n string) bool { return strings.HasSuffix(n, ".conf") }) {
			if db, ok := read(dp); ok {
				di, dprobs := parseUnit(root.Display(dp), db)
				ini.Entries = append(ini.Entries, di.Entries...)
				probs = append(probs, dprobs...)
			}
		}
		c.Problems = append(c.Problems, probs...)
		kind, match, name := "systemd-networkd [Match] MACAddress=", networkd.Match{}, ""
		if strings.HasSuffix(p, ".link") {
			l, lprobs := networkd.ParseLink(unitOf(ini))
			c.Problems = append(c.Problems, fromParser(lprobs)...)
			kind, match, name = "systemd .link [Match] MACAddress=", l.Match, firstNonEmpty(l.Name, matchLabel(l.Match))
		} else {
			n, nprobs := networkd.ParseNetwork(unitOf(ini))
			c.Problems = append(c.Problems, fromParser(nprobs)...)
			c.Networkd = append(c.Networkd, n)
			match, name = n.Match, matchLabel(n.Match)
		}
		for _, m := range match.MACs {
			c.Bindings = append(c.Bindings, MACBinding{MAC: m.MAC, At: m.At, Kind: kind, Name: name})
		}
	}

	for _, p := range overlay(root, nmDirs, func(n string) bool { return strings.HasSuffix(n, ".nmconnection") }) {
		b, ok := read(p)
		if !ok {
			continue
		}
		ini, probs := parseKeyfile(root.Display(p), b)
		nm, nprobs := nmconn.Parse(keyfileOf(ini))
		c.Problems = append(c.Problems, append(probs, fromParser(nprobs)...)...)
		c.NM = append(c.NM, nm)
		if nm.MAC != nil {
			c.Bindings = append(c.Bindings, MACBinding{MAC: nm.MAC.MAC, At: nm.MAC.At, Kind: "NetworkManager mac-address", Name: firstNonEmpty(nm.InterfaceName, nm.ID)})
		}
	}

	for _, dir := range ifcfgDirs {
		for _, p := range overlay(root, []string{dir}, func(n string) bool { return strings.HasPrefix(n, "ifcfg-") && n != "ifcfg-lo" }) {
			b, ok := read(p)
			if !ok {
				continue
			}
			vars, probs := parseIfcfg(root.Display(p), b)
			i, iprobs, ok := ifcfgOf(root.Display(p), vars)
			c.Problems = append(c.Problems, append(probs, iprobs...)...)
			if ok && i.MAC != nil {
				c.Bindings = append(c.Bindings, MACBinding{MAC: i.MAC.MAC, At: i.MAC.At, Kind: "ifcfg HWADDR", Name: i.Name})
			}
		}
	}

	if b, ok := read(persistentNetRules); ok {
		rules, probs := udevrules.Parse(root.Display(persistentNetRules), b)
		c.Problems = append(c.Problems, fromParser(probs)...)
		for _, r := range rules {
			c.Bindings = append(c.Bindings, MACBinding{MAC: r.MAC, At: r.At, Kind: "udev 70-persistent-net.rules", Name: r.Name})
		}
	}

	for _, d := range netplan.Merge(c.Netplan).Devices {
		if d.Match != nil && d.Match.MAC != nil {
			c.Bindings = append(c.Bindings, MACBinding{MAC: d.Match.MAC, At: d.Match.MACAt, Kind: "netplan match: macaddress", Name: firstNonEmpty(d.Name(), d.ID)})
		}
	}
	return c
}

func (c *NetworkConfig) readNetworkdConf(root *fs.Root, p string, read func(string) ([]byte, bool)) {
	b, ok := read(p)
	if !ok {
		return
	}
	ini, probs := parseUnit(root.Display(p), b)
	c.Problems = append(c.Problems, probs...)
	c.NetworkdConf.Apply(unitOf(ini))
}

// overlay lists the regular files accepted by keep in dirs, where a file
// in a later directory replaces the same name in an earlier one, sorted by
// base name (the order netplan and systemd apply them in).
func overlay(root *fs.Root, dirs []string, keep func(string) bool) []string {
	byName := map[string]string{}
	for _, d := range dirs {
		es, err := root.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range es {
			if keep(e.Name) && !e.IsDir() {
				byName[e.Name] = path.Join(d, e.Name)
			}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}

// errText keeps the cause of a file error without repeating the path.
func errText(err error) string {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// readOptional reads p below root; a missing file is not there, any other
// error is recorded in unreadable (shown to the operator) and the file
// counts as not there.
func readOptional(root *fs.Root, p string, unreadable *[]string) ([]byte, bool) {
	b, err := root.ReadFile(p)
	switch {
	case err == nil:
		return b, true
	case !errors.Is(err, iofs.ErrNotExist):
		*unreadable = append(*unreadable, root.Display(p)+": "+errText(err))
	}
	return nil, false
}
