package dns

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// The resolver configuration
	CodeDNSConfigOK = runner.Code{ID: "dns-config-ok", Group: "The resolver configuration", Status: "pass",
		Meaning: "The resolver configuration is usable; the message counts the servers. Detail `resolver_stack`, `nameservers`, `search`, `options`."}
	CodeDNSNoNameserver = runner.Code{ID: "dns-no-nameserver", Group: "The resolver configuration", Status: "fail",
		Meaning: "`/etc/resolv.conf` is missing, a dangling symlink, or lists no nameserver.",
		Fix:     "Restore `/etc/resolv.conf`, or the service that writes it such as systemd-resolved (`systemctl enable --now systemd-resolved`), and give the guest nameservers in its network configuration: netplan or cloud-init network-config `nameservers: {addresses: [...]}`, or the DHCP server's DNS option.",
		RootFix: "Restore `/etc/resolv.conf` in the image, as a file or as a link to what writes it at boot (such as systemd-resolved's `../run/systemd/resolve/stub-resolv.conf`), and give the guest nameservers in its network configuration: netplan or cloud-init network-config `nameservers: {addresses: [...]}`, or the DHCP server's DNS option.",
		Cases: []runner.Case{{When: "when the file lists no nameserver",
			Fix: "Give the guest nameservers in its network configuration: netplan or cloud-init network-config `nameservers: {addresses: [...]}`, or the DHCP server's DNS option; then check that `/etc/resolv.conf` lists them."}}}
	CodeDNSTooMany = runner.Code{ID: "dns-too-many-nameservers", Group: "The resolver configuration", Status: "warn",
		Meaning: "`/etc/resolv.conf` lists more than three nameservers; detail `ignored` names the ones the C library never asks.",
		Fix:     "Keep at most three nameservers in the network configuration (the C library never asks {ignored}), or let systemd-resolved, which uses all of them, manage the list."}
	CodeDNSConfigInvalid = runner.Code{ID: "dns-config-invalid", Group: "The resolver configuration", Status: "warn",
		Meaning: "Lines of `/etc/resolv.conf` or of the upstream file cannot be understood; the message names the first as `FILE:LINE: reason`, detail `problems` lists all.",
		Fix:     "Fix or remove the lines of {file} that the detail named `problems` lists: the C library silently skips them, so what they were meant to set is not in force."}
	CodeDNSConfigUnreadable = runner.Code{ID: "dns-config-unreadable", Group: "The resolver configuration", Status: "error",
		Meaning: "`/etc/resolv.conf` exists but cannot be read (permissions, symlink loop).",
		Fix:     "Run guestcheck as root, or make {path} readable.",
		Cases: []runner.Case{
			runner.RootDenied("{path}"),
			{When: "when the file cannot be opened for another reason", Fix: "Repair {path}: make it a regular file, or a link that resolves inside the guest to what writes it (such as systemd-resolved's `stub-resolv.conf`), without a symlink loop."},
		}}
	CodeDNSConfigRuntime = runner.Code{ID: "dns-config-runtime", Group: "The resolver configuration", Status: "skip",
		Meaning: "Under `--root IMAGE`, `/etc/resolv.conf` is a symlink into `/run`, which only exists on the running system."}
	CodeDNSStubNoUpstream = runner.Code{ID: "dns-stub-no-upstream", Group: "The resolver configuration", Status: "warn",
		Meaning: "`/etc/resolv.conf` points at the systemd-resolved stub, but `/run/systemd/resolve/resolv.conf` is missing (resolved is probably not running) or lists no server.",
		Fix:     "Make sure systemd-resolved runs (`systemctl enable --now systemd-resolved`) and has upstream servers (netplan `nameservers`, `DNS=` in `/etc/systemd/resolved.conf`, or the DHCP server's DNS option); `resolvectl status` shows the servers it uses."}

	// The nameservers' answers
	CodeDNSServersOK = runner.Code{ID: "dns-servers-ok", Group: "The nameservers' answers", Status: "pass",
		Meaning: "Every server of the group answers; the message gives the fastest time."}
	CodeDNSServersSomeDead = runner.Code{ID: "dns-servers-some-dead", Group: "The nameservers' answers", Status: "warn",
		Meaning: "Some servers do not answer; lookups that try them first wait for the resolver's timeout (5 s per try with the C library's defaults). Detail `server_N`, `server_N_status`, `server_N_time`, `server_N_answers`, `server_N_errors`.",
		Fix:     "Remove or replace the servers that do not answer ({servers}) in the network configuration or the DHCP server's DNS option that lists them: lookups that try one of them first wait for the resolver's timeout."}
	CodeDNSServersDead = runner.Code{ID: "dns-servers-dead", Group: "The nameservers' answers", Status: "fail",
		Meaning: "No server of the group answers: name resolution is broken.",
		Fix:     "Check that this VM can reach {servers} on UDP port 53 (the `routes` check's findings, the VM's network and VLAN, a firewall), and replace the servers that are dead in the network configuration or the DHCP server's DNS option."}
	CodeDNSNameNotFound = runner.Code{ID: "dns-name-not-found", Group: "The nameservers' answers", Status: "warn",
		Meaning: "A name from `dns.names` got NXDOMAIN or no address from every working server.",
		Fix:     "Create the DNS record of {name}, or remove {name} from `dns.names` in the configuration file if this network is not meant to resolve it."}
	CodeDNSNameInvalid = runner.Code{ID: "dns-name-invalid", Group: "The nameservers' answers", Status: "error",
		Meaning: "A `dns.names` entry cannot be put in a DNS query (a label over 63 bytes).",
		Fix:     "Correct {name} in {source}: each label may have at most 63 characters, and the whole name at most 253."}
	CodeDNSProbeSkipped = runner.Code{ID: "dns-probe-skipped", Group: "The nameservers' answers", Status: "skip",
		Meaning: "The probes did not run: not the running system, or no name to ask.",
		Cases: []runner.Case{{When: "when there is no name to ask",
			Fix: "Set `dns.names` in the configuration file to a name every nameserver must resolve, so that the servers are probed."}}}
)

// Codes lists every code the dns check emits, in the order of its
// reference page.
var Codes = []runner.Code{
	CodeDNSConfigOK, CodeDNSNoNameserver, CodeDNSTooMany, CodeDNSConfigInvalid, CodeDNSConfigUnreadable, CodeDNSConfigRuntime, CodeDNSStubNoUpstream,
	CodeDNSServersOK, CodeDNSServersSomeDead, CodeDNSServersDead, CodeDNSNameNotFound, CodeDNSNameInvalid, CodeDNSProbeSkipped,
}
