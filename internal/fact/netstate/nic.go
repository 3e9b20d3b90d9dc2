package netstate

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// virtualPrefixes are interface names created by container runtimes,
// hypervisors and VPNs inside a guest.
var virtualPrefixes = []string{
	"docker", "br-", "veth", "virbr", "vnet", "cni", "flannel", "cali", "cilium", "lxc", "lxd",
	"kube-", "weave", "podman", "tap", "tun", "wg", "tailscale", "zt", "genev", "vxlan", "nodelocaldns",
}

// IsNIC reports whether l is one of the VM's network cards: a link backed
// by a device (/sys/class/net/<if>/device), or an Ethernet link of plain
// type ("device", or "veth" as below) not named like a container or VPN
// interface. Every other netlink type (bridge, bond, vlan, tuntap,
// wireguard, vxlan...) is virtual; bridges and bonds may still hold a
// NIC's address (Topology.Holder). A veth pair
// end with no master counts as a NIC: containers and the netns tests give
// a guest its network that way, while container runtimes' own veths are
// enslaved to a bridge or carry a runtime prefix (cali, lxc, veth...).
func IsNIC(l Link) bool {
	if l.Encap == "loopback" || l.Name == "lo" {
		return false
	}
	if l.Device {
		return true
	}
	if l.Encap != "" && l.Encap != "ether" {
		return false
	}
	switch {
	case l.Kind == "veth":
		if l.MasterIndex != 0 {
			return false
		}
		// A bare "vethXXXX" is a container runtime's end; other names
		// (eth0, ens3, mgmt0) are the guest's own network.
		return !hasVirtualPrefix(l.Name, "veth")
	case l.Kind == "device":
		return !hasVirtualPrefix(l.Name, "")
	}
	return false
}

func hasVirtualPrefix(name, except string) bool {
	for _, p := range virtualPrefixes {
		if p != except && strings.HasPrefix(name, p) {
			return true
		}
	}
	return except != "" && strings.HasPrefix(name, except)
}

// MarkDevices sets Link.Device from /sys/class/net/<name>/device under
// root. Only meaningful on the running system, where /sys describes the
// same network namespace as netlink.
func MarkDevices(root *fs.Root, links []Link) {
	for i := range links {
		if strings.ContainsAny(links[i].Name, "/\x00") || links[i].Name == "." || links[i].Name == ".." {
			continue
		}
		links[i].Device = root.Exists("/sys/class/net/" + links[i].Name + "/device")
	}
}
