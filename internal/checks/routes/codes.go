package netroute

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// Links and addresses
	CodeRoutesLinksOK = runner.Code{ID: "routes-links-ok", Group: "Links and addresses", Status: "pass",
		Meaning: "Every NIC found; the message counts those with a global address. Detail `nic_<name>` lists state, MAC and addresses of each."}
	CodeRoutesNoNIC = runner.Code{ID: "routes-no-nic", Group: "Links and addresses", Status: "fail",
		Meaning: "No network card at all: only loopback and virtual links.",
		Fix: "Attach a network interface to the VM (and load its driver, e.g. `virtio_net`)."}
	CodeRoutesNoAddress = runner.Code{ID: "routes-no-address", Group: "Links and addresses", Status: "fail",
		Meaning: "NICs exist, but none holds a global address.",
		Fix: "Check the guest's network config (netplan, NetworkManager, ifcfg) and that the DHCP server answers on the VM's network."}
	CodeRoutesNICDown = runner.Code{ID: "routes-nic-down", Group: "Links and addresses", Status: "warn",
		Meaning: "A NIC (or the bridge/bond holding it) is administratively down or has no carrier. Detail `admin_up`, `carrier`.",
		Fix: "`ip link set <if> up`; in KubeVirt/Harvester check that the VM interface's network exists and its link state is up."}
	CodeRoutesNICNoAddress = runner.Code{ID: "routes-nic-no-address", Group: "Links and addresses", Status: "warn",
		Meaning: "A NIC is up but holds no global address.",
		Fix: "Configure it (DHCP or static in netplan/cloud-init network-config), or remove the unused NIC from the VM."}
	CodeRoutesExpectedMissing = runner.Code{ID: "routes-expected-missing", Group: "Links and addresses", Status: "fail",
		Meaning: "`routes.default_interface` names no interface (neither name nor MAC).",
		Fix: "Fix the setting, or attach the management NIC."}

	// Default routes
	CodeRoutesDefaultOK = runner.Code{ID: "routes-default-ok", Group: "Default routes", Status: "pass",
		Meaning: "One default route wins for the family, on the expected interface. Detail `defaults`, `table`, `expected_interface`, `expected_from`, `policy_defaults`, `policy_rules`."}
	CodeRoutesNoDefault = runner.Code{ID: "routes-no-default", Group: "Default routes", Status: "fail",
		Meaning: "No default route for the family in any table, or only in policy tables, which serve only the traffic their rules select (an unbound socket finds no route).",
		Fix: "Give the management NIC a gateway: DHCP with routes, or netplan `routes: [{to: default, via: GATEWAY}]`."}
	CodeRoutesDefaultTie = runner.Code{ID: "routes-default-tie", Group: "Default routes", Status: "fail",
		Meaning: "Two or more default routes share the lowest metric on different interfaces; which one the kernel uses depends on insertion order, so it changes with the order DHCP leases arrive.",
		Fix: "Give the management NIC's default route the lowest metric, or stop the other NIC installing one: netplan `dhcp4-overrides: {use-routes: false}` or `route-metric`, NetworkManager `ipv4.never-default yes`."}
	CodeRoutesDefaultTakeover = runner.Code{ID: "routes-default-takeover", Group: "Default routes", Status: "fail",
		Meaning: "The winning default route leaves through another interface than the expected one. Detail `winner`, `defaults`, `expected_from`.",
		Fix: "On the secondary NIC set netplan `dhcp4-overrides: {use-routes: false}` (or a higher `route-metric`), or NetworkManager `ipv4.never-default yes`; or set `routes.default_interface` if the winner is in fact right."}
	CodeRoutesDefaultMultiple = runner.Code{ID: "routes-default-multiple", Group: "Default routes", Status: "warn",
		Meaning: "Several default routes with different metrics; the right one wins, the others are fallbacks that take over silently when it disappears.",
		Fix: "Remove them unless they are a deliberate failover: `use-routes: false` / `ipv4.never-default yes` on secondary NICs."}

	// Gateways and symmetry
	CodeRoutesGatewayOffLink = runner.Code{ID: "routes-gateway-offlink", Group: "Gateways and symmetry", Status: "warn",
		Meaning: "A default route's gateway is not reachable on its interface (no subnet or link route covers it, no `onlink` flag). Detail `interface_addresses`.",
		Fix: "Give the interface an address in the gateway's subnet, or fix the gateway (a gateway outside the subnet needs netplan `on-link: true`)."}
	CodeRoutesGatewayNeighFail = runner.Code{ID: "routes-gateway-neigh-failed", Group: "Gateways and symmetry", Status: "warn",
		Meaning: "The gateway's neighbour entry is `FAILED`: it did not answer ARP (IPv4) or neighbour discovery (IPv6).",
		Fix: "Check the gateway exists on that network: VLAN ID, the VM network's attachment, the router the DHCP server advertises, filters on ARP/NDP."}
	CodeRoutesAsymmetric = runner.Code{ID: "routes-asymmetric", Group: "Gateways and symmetry", Status: "warn",
		Meaning: "Two or more NICs are in one subnet and more than one of their addresses has no source rule: replies leave through whichever NIC `main` prefers, and reverse-path filters drop them. Detail `subnet`, `addresses`.",
		Fix: "A routing policy per NIC (netplan `routing-policy: [{from: ADDR, table: N}]` with `routes` in table N), or one NIC per subnet."}

	// Paths to nameservers and targets
	CodeRoutesPath = runner.Code{ID: "routes-path", Group: "Paths to nameservers and targets", Status: "pass",
		Meaning: "The kernel's route to a nameserver or target: `via GATEWAY dev IF src ADDR`; loopback resolvers are reported as local. Detail `destination`, `interface`, `gateway`, `source`, `table`, `from`."}
	CodeRoutesPathUnreachable = runner.Code{ID: "routes-path-unreachable", Group: "Paths to nameservers and targets", Status: "warn",
		Meaning: "The kernel has no route to a nameserver or target (`network is unreachable`).",
		Fix: "Add a route that reaches it, usually the default route on the management NIC."}
	CodeRoutesNameserverOffPath = runner.Code{ID: "routes-nameserver-secondary", Group: "Paths to nameservers and targets", Status: "warn",
		Meaning: "A nameserver is reached through another interface than the expected default-route one: DNS breaks when that network goes.",
		Fix: "Use a nameserver reachable through the management interface, or keep the secondary NIC's DNS out of the resolver: netplan `dhcp4-overrides: {use-dns: false}`, NetworkManager `ipv4.ignore-auto-dns yes`."}
	CodeRoutesTargetInvalid = runner.Code{ID: "routes-target-invalid", Group: "Paths to nameservers and targets", Status: "error",
		Meaning: "A `routes.targets` entry is not an IP address (names are not resolved, so the check sends no traffic).",
		Fix: "List IP addresses."}

	// When the kernel cannot be asked
	CodeRoutesKernelError = runner.Code{ID: "routes-kernel-error", Group: "When the kernel cannot be asked", Status: "error",
		Meaning: "Netlink could not be read (a seccomp or container profile may block it). Detail `error`.",
		Fix: "Run guestcheck on the guest itself."}
	CodeRoutesNotLive = runner.Code{ID: "routes-not-live", Group: "When the kernel cannot be asked", Status: "skip",
		Meaning: "`--root` points at an image: there is no kernel state to judge."}
)
