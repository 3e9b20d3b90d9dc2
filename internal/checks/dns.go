package checks

import (
	dnscheck "github.com/guestcheck/guestcheck/internal/checks/dns"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// DNS verifies the resolver configuration (resolv.conf and the
// systemd-resolved stack) and probes every nameserver in parallel. It does
// not depend on routes: when routing is broken, which nameservers still
// answer is exactly the evidence an operator needs.
var DNS = runner.Check{
	ID:    "dns",
	Title: "DNS resolvers",
	Description: "The resolver lists one to three nameservers (behind systemd-resolved, its upstreams) " +
		"and each of them answers within dns.timeout",
	Codes: dnscheck.DNSCodes(),
	Run:   dnscheck.RunDNS,
}
