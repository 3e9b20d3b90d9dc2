package dns

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/fact/hostnamefile"
	"github.com/guestcheck/guestcheck/internal/shared/config"
)

// ProbeNames decides which names the dns check resolves: dns.names when
// set, else the machine's FQDN, else a dotted hostname.expected from the
// configuration. from says which; names is empty when there is nothing
// sensible to ask (resolving a bare short name tests the search list,
// not the servers).
func ProbeNames(root fs.Reader, live bool, cfg *config.Config) (names []string, from string) {
	if cfg != nil && len(cfg.DNS.Names) > 0 {
		return cfg.DNS.Names, "config dns.names"
	}
	if fqdn, src := hostnamefile.MachineFQDN(root, live); fqdn != "" {
		return []string{fqdn}, "the machine's FQDN (" + src + ")"
	}
	if cfg != nil && strings.Contains(strings.TrimSuffix(cfg.Hostname.Expected, "."), ".") {
		return []string{strings.TrimSuffix(cfg.Hostname.Expected, ".")}, "config hostname.expected"
	}
	return nil, ""
}
