package dnscheck

import "github.com/guestcheck/guestcheck/internal/shared/runner"

// The check's finding codes: each one's reference entry and the fix its
// findings carry.
var (

	// The resolver configuration
	CodeDNSConfigOK = runner.Code{ID: "dns-config-ok", Group: "The resolver configuration", Status: "pass",
		Meaning: "The resolver configuration is usable; the message counts the servers. Detail `resolver_stack`, `nameservers`, `search`, `options`."}
	CodeDNSNoNameserver = runner.Code{ID: "dns-no-nameserver", Group: "The resolver configuration", Status: "fail",
		Meaning: "`/etc/resolv.conf` is missing, a dangling symlink, or lists no nameserver.",
		Fix: "Give the guest nameservers: netplan or cloud-init network-config `nameservers: {addresses: [...]}`, or the DHCP server's DNS option; restore the service that writes resolv.conf."}
	CodeDNSTooMany = runner.Code{ID: "dns-too-many-nameservers", Group: "The resolver configuration", Status: "warn",
		Meaning: "`/etc/resolv.conf` lists more than three nameservers; detail `ignored` names the ones the C library never asks.",
		Fix: "Keep at most three, or let systemd-resolved manage the list."}
	CodeDNSConfigInvalid = runner.Code{ID: "dns-config-invalid", Group: "The resolver configuration", Status: "warn",
		Meaning: "Lines of `/etc/resolv.conf` or of the upstream file cannot be understood; the message names the first as `FILE:LINE: reason`, detail `problems` lists all.",
		Fix: "Fix or remove those lines; the C library silently skips them."}
	CodeDNSConfigUnreadable = runner.Code{ID: "dns-config-unreadable", Group: "The resolver configuration", Status: "error",
		Meaning: "`/etc/resolv.conf` exists but cannot be read (permissions, symlink loop).",
		Fix: "Run as root, or make it readable."}
	CodeDNSConfigRuntime = runner.Code{ID: "dns-config-runtime", Group: "The resolver configuration", Status: "skip",
		Meaning: "Under `--root IMAGE`, `/etc/resolv.conf` is a symlink into `/run`, which only exists on the running system."}
	CodeDNSStubNoUpstream = runner.Code{ID: "dns-stub-no-upstream", Group: "The resolver configuration", Status: "warn",
		Meaning: "`/etc/resolv.conf` points at the systemd-resolved stub, but `/run/systemd/resolve/resolv.conf` is missing (resolved is probably not running) or lists no server.",
		Fix: "Give resolved upstream servers (netplan `nameservers`, `DNS=` in `resolved.conf`, DHCP DNS option); check `resolvectl status`."}

	// The nameservers' answers
	CodeDNSServersOK = runner.Code{ID: "dns-servers-ok", Group: "The nameservers' answers", Status: "pass",
		Meaning: "Every server of the group answers; the message gives the fastest time."}
	CodeDNSServersSomeDead = runner.Code{ID: "dns-servers-some-dead", Group: "The nameservers' answers", Status: "warn",
		Meaning: "Some servers do not answer; lookups that try them first wait for the resolver's timeout (5 s per try with the C library's defaults). Detail `server_N`, `server_N_status`, `server_N_time`, `server_N_answers`, `server_N_errors`.",
		Fix: "Remove or replace the dead server in the network config."}
	CodeDNSServersDead = runner.Code{ID: "dns-servers-dead", Group: "The nameservers' answers", Status: "fail",
		Meaning: "No server of the group answers: name resolution is broken.",
		Fix: "Check the servers are reachable from this VM (see `routes`, the VLAN, its DHCP DNS option) and replace dead ones."}
	CodeDNSNameNotFound = runner.Code{ID: "dns-name-not-found", Group: "The nameservers' answers", Status: "warn",
		Meaning: "A name from `dns.names` got NXDOMAIN or no address from every working server.",
		Fix: "Create the record, or drop the name from `dns.names`."}
	CodeDNSNameInvalid = runner.Code{ID: "dns-name-invalid", Group: "The nameservers' answers", Status: "error",
		Meaning: "A `dns.names` entry cannot be put in a DNS query (a label over 63 bytes).",
		Fix: "Fix the name."}
	CodeDNSProbeSkipped = runner.Code{ID: "dns-probe-skipped", Group: "The nameservers' answers", Status: "skip",
		Meaning: "The probes did not run: not the running system, or no name to ask.",
		Fix: "Set `dns.names` to have the servers probed."}
)
