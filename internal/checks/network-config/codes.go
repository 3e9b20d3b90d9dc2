package networkconfig

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// atSource ends the fix of a mismatch on the running system: the fix
// belongs in the network data the VM was given, not in the guest by hand
// (the Harvester article's advice for every such mismatch).
const atSource = " in the VM's network data (cloud-init network-config) or in the template it came from, then reboot or run `cloud-init clean --configs network && cloud-init init`: a fix made by hand inside the guest is lost on the next boot or clone."

// inImage ends the same fix under an image root, where cloud-init's
// commands would act on the host: the image's own files are corrected.
const inImage = " in the image's network configuration files, or in the build or network data that wrote them, then rebuild the image: its clones boot with what it holds."

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Reading the declaration
	CodeNCNone = runner.Code{ID: "netconfig-none", Group: "Reading the declaration", Status: "skip",
		Meaning: "No declared network configuration was found (cloud-init, netplan, NetworkManager, systemd-networkd, ifupdown or ifcfg). Detail `consulted` lists where the check looked."}
	CodeNCUnreadable = runner.Code{ID: "netconfig-unreadable", Group: "Reading the declaration", Status: "error",
		Meaning: "Network configuration files exist but cannot be read (NetworkManager keyfiles and netplan files are readable by root only). Detail `files`.",
		Fix:     "Run guestcheck as root: NetworkManager keyfiles and netplan files are readable by root only.",
		Cases:   []runner.Case{runner.RootDenied("{files}")}}
	CodeNCInvalid = runner.Code{ID: "netconfig-invalid", Group: "Reading the declaration", Status: "warn",
		Meaning: "A configuration file has lines the network service rejects or ignores; one finding per file, the message names the first problem as `FILE:LINE: reason`, detail `problems` lists all.",
		Fix:     "Fix the lines of {file} that the detail named `problems` lists: the network service ignores or rejects them, so the interfaces are not configured as declared."}
	CodeNCLiveSkipped = runner.Code{ID: "netconfig-live-skipped", Group: "Reading the declaration", Status: "skip",
		Meaning: "Under `--root`, the declared configuration is not compared with the interfaces: that needs the running system. Detail `source`, `files`."}
	CodeNCKernelError = runner.Code{ID: "netconfig-kernel-error", Group: "Reading the declaration", Status: "error",
		Meaning: "The network interfaces could not be read through netlink to compare them with the declaration. Detail `error`.",
		Fix:     "Run guestcheck on the guest itself, in its own network namespace and where netlink sockets are allowed (not in a container or sandbox that denies them)."}

	// The declaration's consistency
	CodeNCConsistent = runner.Code{ID: "netconfig-consistent", Group: "The declaration's consistency", Status: "pass",
		Meaning: "Under `--root`: no address, default gateway or interface is declared twice. Detail `source`, `files`."}
	CodeNCDuplicateAddress = runner.Code{ID: "netconfig-duplicate-address", Group: "The declaration's consistency", Status: "fail",
		Meaning: "One address is declared more than once. Detail `address`, `declared` (each interface and place).",
		Fix:     "Declare {address} once, on the interface that owns it," + atSource,
		RootFix: "Declare {address} once, on the interface that owns it," + inImage}
	CodeNCGatewayConflict = runner.Code{ID: "netconfig-gateway-conflict", Group: "The declaration's consistency", Status: "fail",
		Meaning: "Two interfaces declare a default gateway of one family with the same metric, or with none: which one the kernel uses is arbitrary, and netplan refuses such files. Detail `family`, `gateways`.",
		Fix:     "Declare the {family} default gateway on the management NIC only, or give the other interfaces' gateways a higher metric: otherwise the kernel uses either, and netplan refuses the files."}
	CodeNCMatchedTwice = runner.Code{ID: "netconfig-matched-twice", Group: "The declaration's consistency", Status: "fail",
		Meaning: "Two declarations apply to one interface: by name, by MAC address, or on the running system by matching the same link. Detail `declarations`.",
		Fix:     "Keep one declaration of {what} and remove the others: the network service applies only one of them, and which one depends on the order of the files."}

	// Each declared interface
	CodeNCInterfaceOK = runner.Code{ID: "netconfig-interface-ok", Group: "Each declared interface", Status: "pass",
		Meaning: "The interface exists, is up and has what was declared. Detail `interface`, `declared_at`, `link`, `source`."}
	CodeNCInterfaceMissing = runner.Code{ID: "netconfig-interface-missing", Group: "Each declared interface", Status: "fail, or warn when `optional`",
		Meaning: "No interface answers the declaration (by name, MAC, driver or name glob). Detail `nics` lists the NICs that exist with their MACs and drivers, `unconfigured_nics` those no declaration claims.",
		Fix:     "Declare {interface} by the name or MAC address of a NIC the VM has ({nics}), or give the VM the NIC it declares," + atSource,
		Cases: []runner.Case{
			{When: "when exactly one NIC is left unconfigured",
				Fix: "Name the interface {nic}, or match it by `macaddress: {mac}`," + atSource},
			{When: "for a VLAN, bond or bridge",
				Fix: "Read in the network service's journal (`journalctl -b -u systemd-networkd`, `-u NetworkManager` or `-u networking`) why it did not create {interface}, and correct the declaration" + atSource},
		}}
	CodeNCNameMismatch = runner.Code{ID: "netconfig-name-mismatch", Group: "Each declared interface", Status: "warn",
		Meaning: "The matched interface did not get the declared name (`set-name`, cloud-init v1 `name` with `mac_address`).",
		Fix:     "Find why {link} was not renamed {name}: the rename rule (netplan `set-name`, a systemd `.link` file, cloud-init's udev rule) and whether another interface holds the name (`ip link`); correct the rule" + atSource}
	CodeNCInterfaceDown = runner.Code{ID: "netconfig-interface-down", Group: "Each declared interface", Status: "fail, or warn when `optional`",
		Meaning: "The interface is administratively down, or up without carrier. Detail `admin_up`, `carrier`.",
		Fix:     "Check the VM's attachment of {link} on the host side: the network or bridge it is plugged into, its VLAN, and whether the host's end of the link is up.",
		Cases: []runner.Case{{When: "when it is administratively down",
			Fix: "Find in the network service's journal (`journalctl -b -u systemd-networkd`, `-u NetworkManager` or `-u networking`) why it did not bring {link} up, and whether the declaration keeps it down (netplan `activation-mode`, ifcfg `ONBOOT=no`)."}}}
	CodeNCAddressMissing = runner.Code{ID: "netconfig-address-missing", Group: "Each declared interface", Status: "fail",
		Meaning: "A declared static address is not assigned; the message shows the assigned ones. Detail `declared`, `assigned`.",
		Fix:     "Find what gave {link} other addresses than {address} (a DHCP client, a configuration made by hand, a second declaration) and remove it so that the declaration applies, or correct the declared address" + atSource}
	CodeNCNoLease = runner.Code{ID: "netconfig-dhcp-no-lease", Group: "Each declared interface", Status: "fail, or warn when `optional`",
		Meaning: "The interface is declared for DHCP but has no dynamic address of that family. Detail `assigned`.",
		Fix:     "Check that a DHCP server serves {family} on the network {link} is attached to (the VM's network, its VLAN ID, free addresses in the DHCP range), and read the DHCP client's journal (`journalctl -b -u systemd-networkd` or `-u NetworkManager`)."}
	CodeNCLeaseRouterUnused = runner.Code{ID: "netconfig-lease-router-unused", Group: "Each declared interface", Status: "warn",
		Meaning: "The DHCP lease's router is not used by any route through the interface. Detail `lease`, `routes`.",
		Fix:     "If {link} should carry the default route, allow DHCP routes on it (netplan `dhcp4-overrides: {use-routes: true}`, NetworkManager `ipv4.ignore-auto-routes no`); if it should not, the lease's router {routers} is rightly unused and nothing needs to change."}
	CodeNCLeaseDNSUnused = runner.Code{ID: "netconfig-lease-dns-unused", Group: "Each declared interface", Status: "warn",
		Meaning: "A nameserver of the DHCP lease is not used by the resolver. Detail `lease`, `resolver_stack`.",
		Fix:     "Let the DHCP client of {link} hand its nameservers ({servers}) to the resolver (systemd-resolved, or the resolvconf package for ifupdown), or declare the nameservers the VM should use in its network data."}
	CodeNCGatewayNotDefault = runner.Code{ID: "netconfig-gateway-not-default", Group: "Each declared interface", Status: "fail",
		Meaning: "The declared gateway is not the winning default route through its interface (the lowest metric in the table general traffic consults): the two-NIC takeover, judged from the declaration. Detail `declared_gateway`, `defaults`.",
		Fix:     "Keep the default route on {link}, the NIC whose gateway {gateway} is declared: on the other NIC set netplan `dhcp4-overrides: {use-routes: false}` (or a higher `route-metric`), or NetworkManager `ipv4.never-default yes`.",
		Cases: []runner.Case{{When: "when no default route carries general traffic",
			Fix: "Find why the default route via {gateway} on {link} was not installed: the network service's journal (`journalctl -b -u systemd-networkd` or `-u NetworkManager`), and whether {link} has an address in the gateway's subnet; correct the declaration" + atSource}}}
	CodeNCMTUMismatch = runner.Code{ID: "netconfig-mtu-mismatch", Group: "Each declared interface", Status: "warn",
		Meaning: "The interface's MTU differs from the declared one; a DHCP MTU option or a parent's smaller MTU may override the declaration.",
		Fix:     "Align the MTU declared for {link} ({mtu}) with the network's, and check that no DHCP MTU option or parent interface overrides it; correct it" + atSource}
	CodeNCVLANMismatch = runner.Code{ID: "netconfig-vlan-mismatch", Group: "Each declared interface", Status: "fail",
		Meaning: "The VLAN has another ID or parent than declared, or is not a VLAN: a wrong VLAN ID puts the VM on another network, where DHCP and the gateway do not answer. Detail `vlan_id`, `parent`.",
		Fix:     "Correct the kind, VLAN ID and parent declared for {link}" + atSource}
	CodeNCMembersMismatch = runner.Code{ID: "netconfig-members-mismatch", Group: "Each declared interface", Status: "fail",
		Meaning: "A bond or bridge lacks a declared member, or is not a bond or bridge. Detail `declared_members`, `ports`.",
		Fix:     "Check that the members declared for {link} ({members}) exist under those names or matches, find in the network service's journal why they were not attached, and correct the declaration" + atSource}

	// The resolver
	CodeNCNameserversOK = runner.Code{ID: "netconfig-nameservers-ok", Group: "The resolver", Status: "pass",
		Meaning: "The resolver uses every declared nameserver and search domain. Detail `resolver_stack`, `resolver_servers`, `resolver_search`."}
	CodeNCNameserverMissing = runner.Code{ID: "netconfig-nameserver-missing", Group: "The resolver", Status: "fail",
		Meaning: "A declared nameserver is not used by the resolver (`/etc/resolv.conf`, and behind the systemd-resolved stub its upstream list).",
		Fix:     "Make the network service hand the declared nameservers ({servers}) to the resolver (systemd-resolved, or the resolvconf package for ifupdown's `dns-nameservers`), or correct them" + atSource,
		Cases: []runner.Case{{When: "behind systemd-resolved",
			Fix: "Check with `resolvectl status` which servers systemd-resolved has for each link, and give it the declared nameservers ({servers}), or correct them" + atSource}}}
	CodeNCSearchMissing = runner.Code{ID: "netconfig-search-missing", Group: "The resolver", Status: "warn",
		Meaning: "A declared search domain is not in the resolver's search list, so short names do not resolve as intended.",
		Fix:     "Make the network service hand the declared search domains ({domains}) to the resolver (systemd-resolved, or the resolvconf package for ifupdown's `dns-search`), or correct them" + atSource}
)

// Codes lists every code the network-config check emits, in the order
// of its reference page.
var Codes = []runner.Code{
	CodeNCNone, CodeNCUnreadable, CodeNCInvalid, CodeNCLiveSkipped, CodeNCKernelError,
	CodeNCConsistent, CodeNCDuplicateAddress, CodeNCGatewayConflict, CodeNCMatchedTwice,
	CodeNCInterfaceOK, CodeNCInterfaceMissing, CodeNCNameMismatch, CodeNCInterfaceDown,
	CodeNCAddressMissing, CodeNCNoLease, CodeNCLeaseRouterUnused, CodeNCLeaseDNSUnused,
	CodeNCGatewayNotDefault, CodeNCMTUMismatch, CodeNCVLANMismatch, CodeNCMembersMismatch,
	CodeNCNameserversOK, CodeNCNameserverMissing, CodeNCSearchMissing,
}
