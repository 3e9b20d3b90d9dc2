package dns

import (
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// Settings are the dns section of guestcheck.yaml: the nameserver
// probes.
type Settings struct {
	// Names to resolve through every nameserver; default: the machine's
	// FQDN when it has a domain.
	Names []string
	// Timeout bounds each nameserver's whole probe, all names and attempts
	// included, so a black-hole server costs exactly this.
	Timeout time.Duration
	// Retries are further attempts after a timed-out one; the attempts
	// share Timeout equally.
	Retries int
}

var settings = config.Settings[Settings]{
	Name:    "dns",
	Help:    "The dns check's nameserver probes: the names resolved through every nameserver (by default this machine's FQDN when it has a domain; with neither, the probes skip and say so), and each server's deadline.",
	Default: func() Settings { return Settings{Timeout: DefaultDNSTimeout, Retries: DefaultDNSRetries} },
	Keys: []config.Field[Settings]{
		config.List("names", "list of names", "this machine's FQDN, when it has a domain",
			"Names to resolve through every nameserver; with none, the probes skip and say so.",
			func(s *Settings, v []string) { s.Names = v }).WithExample("[vm1.example.org]"),
		config.Duration("timeout", "2s",
			"Bounds each nameserver's whole probe, all names and attempts included, so that a server that never answers costs exactly this.",
			false, func(s *Settings, v time.Duration) { s.Timeout = v }),
		config.Count("retries", "1", "Further attempts after a timed-out one; the attempts share dns.timeout equally.",
			func(s *Settings, v int) { s.Retries = v }),
	},
}
