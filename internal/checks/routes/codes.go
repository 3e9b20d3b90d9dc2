package routes

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Links and addresses
	codeRoutesLinksOK = runner.Code{ID: "routes-links-ok", Group: "Links and addresses", Status: "pass",
		Meaning: "Every NIC found; the message counts those with a global address. Detail `nic_<name>` lists state, MAC and addresses of each."}
	codeRoutesNoNIC = runner.Code{ID: "routes-no-nic", Group: "Links and addresses", Status: "fail",
		Meaning: "No network card at all: only loopback and virtual links.",
		Fix:     "Attach a network interface to the VM (and load its driver, e.g. `virtio_net`)."}
	codeRoutesNoAddress = runner.Code{ID: "routes-no-address", Group: "Links and addresses", Status: "fail",
		Meaning: "NICs exist, but none holds a global address.",
		Fix:     "Check the guest's network configuration (netplan, NetworkManager, networkd, ifcfg) and that its DHCP server answers on the VM's network."}
	codeRoutesNICDown = runner.Code{ID: "routes-nic-down", Group: "Links and addresses", Status: "warn",
		Meaning: "A NIC (or the bridge/bond holding it) is administratively down or has no carrier. Detail `admin_up`, `carrier`.",
		Fix:     "Bring {interface} up (`ip link set {interface} up`) and check that the VM's interface is attached to an existing network with its link state up.",
		Cases: []runner.Case{
			{When: "when the bridge or bond holding it is down", Fix: "Bring {holder}, the bridge or bond that holds {interface}, up (`ip link set {holder} up`), and check that the VM's interface is attached to an existing network with its link state up."},
		}}
	codeRoutesNICNoAddress = runner.Code{ID: "routes-nic-no-address", Group: "Links and addresses", Status: "warn",
		Meaning: "A NIC is up but holds no global address.",
		Fix:     "Configure {interface} (DHCP or a static address in netplan or cloud-init network-config), or remove the unused NIC from the VM."}
	codeRoutesExpectedMissing = runner.Code{ID: "routes-expected-missing", Group: "Links and addresses", Status: "fail",
		Meaning: "`routes.default_interface` names no interface (neither name nor MAC).",
		Fix:     "Set `routes.default_interface` to the management NIC's name or MAC address instead of `{configured}`, or attach that NIC to the VM."}

	// Default routes
	codeRoutesDefaultOK = runner.Code{ID: "routes-default-ok", Group: "Default routes", Status: "pass",
		Meaning: "One default route wins for the family, on the expected interface. Detail `defaults`, `table`, `expected_interface`, `expected_from`, `policy_defaults`, `policy_rules`."}
	codeRoutesNoDefault = runner.Code{ID: "routes-no-default", Group: "Default routes", Status: "fail",
		Meaning: "No default route for the family in any table, or only in policy tables, which serve only the traffic their rules select (an unbound socket finds no route).",
		Fix:     "Give the management NIC a gateway for {family}: a DHCP server that hands out a router, or netplan `routes: [{to: default, via: GATEWAY}]`.",
		Cases: []runner.Case{
			{When: "when only policy tables have a default route", Fix: "Give the management NIC a default route for {family} in the main table: a DHCP server that hands out a router, or netplan `routes: [{to: default, via: GATEWAY}]`; the policy tables {tables} serve only the traffic their rules select."},
		}}
	codeRoutesDefaultTie = runner.Code{ID: "routes-default-tie", Group: "Default routes", Status: "fail",
		Meaning: "Two or more default routes share the lowest metric on different interfaces; which one the kernel uses depends on insertion order, so it changes with the order DHCP leases arrive.",
		Fix:     "Decide which of {interfaces} is the management NIC, then give its default route the lowest metric or stop the others installing one: netplan `dhcp4-overrides: {use-routes: false}` or `route-metric`, NetworkManager `ipv4.never-default yes`."}
	codeRoutesDefaultTakeover = runner.Code{ID: "routes-default-takeover", Group: "Default routes", Status: "fail",
		Meaning: "The winning default route leaves through another interface than the expected one. Detail `winner`, `defaults`, `expected_from`.",
		Fix:     "Keep the {family} default route on {expected}: on {winner} set netplan `dhcp4-overrides: {use-routes: false}` (or a higher `route-metric`), or NetworkManager `ipv4.never-default yes`; or set `routes.default_interface` to {winner} if that is in fact the management NIC."}
	codeRoutesDefaultMultiple = runner.Code{ID: "routes-default-multiple", Group: "Default routes", Status: "warn",
		Meaning: "Several default routes with different metrics; the right one wins, the others are fallbacks that take over silently when it disappears.",
		Fix:     "Remove the {family} default routes that do not leave through {winner}, unless they are a deliberate failover: on the other NICs set netplan `dhcp4-overrides: {use-routes: false}` or NetworkManager `ipv4.never-default yes`."}

	// Gateways and symmetry
	codeRoutesGatewayOffLink = runner.Code{ID: "routes-gateway-offlink", Group: "Gateways and symmetry", Status: "warn",
		Meaning: "A default route's gateway is not reachable on its interface (no subnet or link route covers it, no `onlink` flag). Detail `interface_addresses`.",
		Fix:     "Give {interface} an address in the subnet of gateway {gateway}, or correct the gateway in the network configuration (a gateway outside the subnet needs netplan `on-link: true`)."}
	codeRoutesGatewayNeighFail = runner.Code{ID: "routes-gateway-neigh-failed", Group: "Gateways and symmetry", Status: "warn",
		Meaning: "The gateway's neighbour entry is `FAILED`: it did not answer ARP (IPv4) or neighbour discovery (IPv6).",
		Fix:     "Check that gateway {gateway} exists on the network of {interface} (the VLAN ID, the VM network's attachment, the router the DHCP server advertises) and that nothing filters {protocol}."}
	codeRoutesAsymmetric = runner.Code{ID: "routes-asymmetric", Group: "Gateways and symmetry", Status: "warn",
		Meaning: "Two or more NICs are in one subnet and more than one of their addresses has no source rule: replies leave through whichever NIC `main` prefers, and reverse-path filters drop them. Detail `subnet`, `addresses`.",
		Fix:     "Add a routing policy per NIC in {subnet} (netplan `routing-policy: [{from: ADDR, table: N}]` with `routes` in table N), or keep one NIC per subnet."}

	// Paths to nameservers and targets
	codeRoutesPath = runner.Code{ID: "routes-path", Group: "Paths to nameservers and targets", Status: "pass",
		Meaning: "The kernel's route to a nameserver or target: `via GATEWAY dev IF src ADDR`; loopback resolvers are reported as local. Detail `destination`, `interface`, `gateway`, `source`, `table`, `from`."}
	codeRoutesPathUnreachable = runner.Code{ID: "routes-path-unreachable", Group: "Paths to nameservers and targets", Status: "warn",
		Meaning: "The kernel has no route to a nameserver or target (`network is unreachable`).",
		Fix:     "Add a route that reaches {destination}, usually a default route on the management NIC."}
	codeRoutesNameserverOffPath = runner.Code{ID: "routes-nameserver-secondary", Group: "Paths to nameservers and targets", Status: "warn",
		Meaning: "A nameserver is reached through another interface than the expected default-route one: DNS breaks when that network goes.",
		Fix:     "Use a nameserver reachable through {default_interface}, or keep the DNS servers of {interface} out of the resolver: netplan `dhcp4-overrides: {use-dns: false}`, NetworkManager `ipv4.ignore-auto-dns yes`."}
	codeRoutesTargetInvalid = runner.Code{ID: "routes-target-invalid", Group: "Paths to nameservers and targets", Status: "error",
		Meaning: "A `routes.targets` entry is not an IP address (names are not resolved, so the check sends no traffic).",
		Fix:     "Replace `{target}` in `routes.targets` with an IP address: the check resolves no names, so that it sends no traffic."}

	// When the kernel cannot be asked
	codeRoutesKernelError = runner.Code{ID: "routes-kernel-error", Group: "When the kernel cannot be asked", Status: "error",
		Meaning: "Netlink could not be read (a seccomp or container profile may block it). Detail `error`.",
		Fix:     "Run guestcheck on the guest itself, outside any container or seccomp profile that blocks netlink (reading it needs no privileges)."}
	codeRoutesNotLive = runner.Code{ID: "routes-not-live", Group: "When the kernel cannot be asked", Status: "skip",
		Meaning: "`--root` points at an image: there is no kernel state to judge."}
)

// Codes lists every code the routes check emits, in the order of its
// reference page.
var Codes = []runner.Code{
	codeRoutesLinksOK, codeRoutesNoNIC, codeRoutesNoAddress, codeRoutesNICDown, codeRoutesNICNoAddress, codeRoutesExpectedMissing,
	codeRoutesDefaultOK, codeRoutesNoDefault, codeRoutesDefaultTie, codeRoutesDefaultTakeover, codeRoutesDefaultMultiple,
	codeRoutesGatewayOffLink, codeRoutesGatewayNeighFail, codeRoutesAsymmetric,
	codeRoutesPath, codeRoutesPathUnreachable, codeRoutesNameserverOffPath, codeRoutesTargetInvalid,
	codeRoutesKernelError, codeRoutesNotLive,
}
