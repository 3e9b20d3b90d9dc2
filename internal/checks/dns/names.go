package dns

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/checks/hostname"
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
	if names := settings.Of(cfg).Names; len(names) > 0 {
		return names, "config dns.names"
	}
	if fqdn, src := hostnamefile.MachineFQDN(root, live); fqdn != "" {
		return []string{fqdn}, "the machine's FQDN (" + src + ")"
	}
	if exp := strings.TrimSuffix(hostname.ExpectedName(cfg), "."); strings.Contains(exp, ".") {
		return []string{exp}, "config hostname.expected"
	}
	return nil, ""
}
