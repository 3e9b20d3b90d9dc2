package netconf

import (
	"cmp"
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/netplan"
)

// Names of the files cloud-init renders its network configuration into,
// beside ciENI and ciENIOld (cloud-init's netplan, networkd and
// NetworkManager renderers).
const (
	ciNetplan    = "/etc/netplan/50-cloud-init.yaml"
	ciNetworkdPf = "10-cloud-init-"
	ciNMPf       = "cloud-init-"
)

// CloudInitMACs lists the MAC addresses cloud-init's current instance
// was set up for: those its network-config.json names (the instance's,
// else the one under /run: physical entries' mac_address in version 1,
// match: macaddress in version 2), and the MAC bindings of the files
// cloud-init rendered from it (50-cloud-init.yaml, 10-cloud-init-*.network,
// cloud-init-*.nmconnection, ifupdown's 50-cloud-init, ifcfg files with
// its banner, and 70-persistent-net.rules, which its ifupdown and
// sysconfig renderers write, when it rendered one of those). A VM
// that has none of these MACs is not the machine the instance was set
// up on. Files that could not be read or parsed give nothing.
func CloudInitMACs(f Facts) []MACBinding {
	var out []MACBinding
	for _, j := range f.CloudInitJSON {
		if !j.OK {
			continue
		}
		c, _ := netplan.ParseNetworkConfig(j.Name, j.Data)
		for _, d := range c.V1.Ifaces {
			if d.MAC != nil {
				out = append(out, MACBinding{MAC: d.MAC, At: d.At, Kind: "cloud-init network-config mac_address", Name: d.Name})
			}
		}
		if c.Version == 2 {
			for _, d := range netplan.Merge([]netplan.File{c.V2}).Devices {
				if d.Match != nil && d.Match.MAC != nil {
					out = append(out, MACBinding{MAC: d.Match.MAC, At: d.Match.MACAt, Kind: "cloud-init network-config match: macaddress", Name: cmp.Or(d.Name(), d.ID)})
				}
			}
		}
		break // the newest network-config cloud-init kept
	}
	for _, n := range f.Netplan {
		if n.OK && n.Path == ciNetplan {
			for _, d := range netplan.Merge([]netplan.File{n.File}).Devices {
				if d.Match != nil && d.Match.MAC != nil {
					out = append(out, MACBinding{MAC: d.Match.MAC, At: d.Match.MACAt, Kind: "netplan match: macaddress", Name: cmp.Or(d.Name(), d.ID)})
				}
			}
		}
	}
	for _, u := range f.Networkd {
		if u.OK && strings.HasPrefix(path.Base(u.Path), ciNetworkdPf) && strings.HasSuffix(u.Path, ".network") {
			out = append(out, networkdBindings(u)...)
		}
	}
	var rendered Facts
	for _, u := range f.NM {
		if strings.HasPrefix(path.Base(u.Path), ciNMPf) {
			rendered.NM = append(rendered.NM, u)
		}
	}
	renderedUdev := f.ENICloudInit
	for _, i := range f.Ifcfg {
		if i.CloudInit {
			rendered.Ifcfg = append(rendered.Ifcfg, i)
			renderedUdev = true
		}
	}
	for _, e := range f.ENI {
		if e.Path == ciENI || e.Path == ciENIOld {
			rendered.ENI = append(rendered.ENI, e)
		}
	}
	if renderedUdev {
		rendered.PersistentNet = f.PersistentNet
	}
	return append(out, MACBindings(rendered)...)
}
