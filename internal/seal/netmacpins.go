package seal

import (
	"context"
	"path"
	"strings"
)

var opNetMACPins = Operation{
	ID:      "net-mac-pins",
	Default: true,
	Summary: "remove 70-persistent-net.rules; drop HWADDR/UUID from ifcfg and mac-address/uuid from NM keyfiles",
	Plan:    planNetMACPins,
}

const macReason = "pins the configuration to the template's NIC: a clone has another MAC and would come up without network"

func planNetMACPins(ctx context.Context, p *Planner) ([]Action, error) {
	// A directory or a link to /dev/null in its place is the deliberate
	// way to stop udev regenerating it: removePath notes and keeps those.
	out, err := p.removePath("/etc/udev/rules.d/70-persistent-net.rules", regular, macReason)
	if err != nil {
		return nil, err
	}
	ents, err := p.readDir("/etc/sysconfig/network-scripts")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name, "ifcfg-") || e.Name == "ifcfg-lo" {
			continue
		}
		acts, err := p.rewritePath(path.Join("/etc/sysconfig/network-scripts", e.Name), macReason, func(b []byte) []byte {
			return stripKeys(b, "HWADDR", "UUID")
		})
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	ents, err = p.readDir("/etc/NetworkManager/system-connections")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name, ".nmconnection") {
			continue
		}
		acts, err := p.rewritePath(path.Join("/etc/NetworkManager/system-connections", e.Name), macReason, stripNMKeyfile)
		if err != nil {
			return nil, err
		}
		out = append(out, acts...)
	}
	// netplan files other than cloud-init's are the admin's: report MAC
	// matches, do not edit YAML we did not write.
	ents, err = p.readDir("/etc/netplan")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := path.Join("/etc/netplan", e.Name)
		if e.Name == "50-cloud-init.yaml" || !strings.HasSuffix(e.Name, ".yaml") {
			continue
		}
		if b, ok, _ := p.readFile(name); ok && strings.Contains(string(b), "macaddress") {
			p.Note(name, "matches a MAC address; not edited (netplan files other than cloud-init's are left to you)")
		}
	}
	return out, nil
}
