package fleet

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"strings"
)

// agentChannelName is the virtio-serial port qemu-ga listens on.
const agentChannelName = "org.qemu.guest_agent.0"

// maxDomainXML bounds one domain's XML description. Real ones are a few
// KiB to a few tens of KiB; libvirtd is trusted no further than that.
const maxDomainXML = 4 << 20

// Reasons a libvirt domain is not surveyed at all (Target.Unreachable).
const (
	reasonNoChannel    = "no guest agent channel (add <channel type='unix'><target type='virtio' name='org.qemu.guest_agent.0'/></channel> to the domain)"
	reasonNotConnected = "agent not connected (the domain has the channel, but no qemu-guest-agent runs on it in the guest: install and start it)"
)

// domainInfo is what the survey needs of a domain's live XML.
type domainInfo struct {
	Name string
	// Unreachable is reasonNoChannel, reasonNotConnected or empty (the
	// channel is connected, or libvirt does not track its state).
	Unreachable string
	// Networks maps each NIC's MAC to the network it is on.
	Networks map[string]string
}

// domainXML is the subset of libvirt's domain XML that is read.
type domainXML struct {
	XMLName xml.Name `xml:"domain"`
	Name    string   `xml:"name"`
	Devices struct {
		Channels []struct {
			Type   string `xml:"type,attr"`
			Target struct {
				Type  string `xml:"type,attr"`
				Name  string `xml:"name,attr"`
				State string `xml:"state,attr"`
			} `xml:"target"`
		} `xml:"channel"`
		Interfaces []struct {
			Type string `xml:"type,attr"`
			MAC  struct {
				Address string `xml:"address,attr"`
			} `xml:"mac"`
			Source struct {
				Network string `xml:"network,attr"`
				Bridge  string `xml:"bridge,attr"`
				Dev     string `xml:"dev,attr"`
			} `xml:"source"`
		} `xml:"interface"`
	} `xml:"devices"`
}

// parseDomainXML reads a running domain's XML (virDomainGetXMLDesc):
// whether it has the guest agent's channel and in which state, and the
// network of every NIC. name labels the NICs that are on no shared
// network. The XML comes from libvirtd and is bounded and checked like
// any other input.
func parseDomainXML(name string, b []byte) (domainInfo, error) {
	if len(b) > maxDomainXML {
		return domainInfo{}, fmt.Errorf("domain XML of %d bytes, more than %d", len(b), maxDomainXML)
	}
	var d domainXML
	dec := xml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		return domainInfo{}, fmt.Errorf("domain XML: %w", err)
	}
	if d.Name == "" {
		return domainInfo{}, errors.New("domain XML has no name")
	}
	info := domainInfo{Name: d.Name, Unreachable: reasonNoChannel}
	for _, c := range d.Devices.Channels {
		if c.Target.Type != "virtio" || c.Target.Name != agentChannelName {
			continue
		}
		// libvirt writes state= only when QEMU reports the port's
		// state (VSERPORT_CHANGE); without it, try the agent.
		if c.Target.State == "disconnected" {
			info.Unreachable = reasonNotConnected
		} else {
			info.Unreachable = ""
		}
		break
	}
	for _, in := range d.Devices.Interfaces {
		hw, err := net.ParseMAC(in.MAC.Address)
		if err != nil || len(hw) != 6 {
			continue // no MAC (or a bad one): nothing to match it to
		}
		if info.Networks == nil {
			info.Networks = map[string]string{}
		}
		info.Networks[hw.String()] = networkLabel(name, in.Type, in.Source.Network, in.Source.Bridge, in.Source.Dev)
	}
	return info, nil
}

// networkLabel names the L2 network a NIC is on. A libvirt network's
// live XML names its bridge too, so a NIC on network "default" and one
// attached to its bridge virbr0 get the same label. NICs on a network
// only their own domain sees (user-mode, a tap of its own) get a label of
// that domain, so that their addresses never compare with another VM's.
func networkLabel(domain, typ, network, bridge, dev string) string {
	switch {
	case (typ == "network" || typ == "bridge") && bridge != "":
		return "bridge " + bridge
	case typ == "network" && network != "":
		return "network " + network
	case typ == "direct" && dev != "":
		return "direct " + dev
	}
	return fmt.Sprintf("%s interface of domain %s", strings.TrimSpace(typ), domain)
}
