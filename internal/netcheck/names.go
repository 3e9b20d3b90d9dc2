package netcheck

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/config"
	"github.com/guestcheck/guestcheck/internal/fs"
	"github.com/guestcheck/guestcheck/internal/guestfile/hosts"
	"github.com/guestcheck/guestcheck/internal/hostnamefile"
)

// MachineFQDN returns the machine's fully qualified domain name and where
// it was found, or "" when the machine has no domain. It follows what
// `hostname --fqdn` does with a files-only lookup: the hostname itself
// when it is dotted, else the first dotted name of the /etc/hosts line
// that lists the short name.
func MachineFQDN(root *fs.Root, live bool) (fqdn, source string) {
	src, host := hostnamefile.Path, ""
	if live {
		src = hostnamefile.KernelPath
		host, _ = hostnamefile.ReadKernel(root)
	} else {
		host = hostnamefile.ReadStatic(root).Name
	}
	host = strings.TrimSuffix(host, ".")
	if host == "" || isLocalhostName(host) {
		return "", ""
	}
	if strings.Contains(host, ".") {
		return host, root.Display(src)
	}
	hb, err := root.ReadFile("/etc/hosts")
	if err != nil {
		return "", ""
	}
	// Lines resolvers skip are skipped here too; the hostname check
	// reports them.
	entries, _ := hosts.Parse(hb)
	for _, e := range entries {
		listed := false
		for _, n := range e.Names {
			listed = listed || strings.EqualFold(n, host)
		}
		if !listed {
			continue
		}
		for _, n := range e.Names {
			if strings.HasPrefix(strings.ToLower(n), strings.ToLower(host)+".") && !isLocalhostName(n) {
				return strings.TrimSuffix(n, "."), fmt.Sprintf("%s:%d", root.Display("/etc/hosts"), e.Line)
			}
		}
	}
	return "", ""
}

func isLocalhostName(n string) bool {
	n = strings.ToLower(n)
	return n == "localhost" || strings.HasPrefix(n, "localhost.") || strings.HasSuffix(n, ".localhost")
}

// ProbeNames decides which names the dns check resolves: dns.names when
// set, else the machine's FQDN, else a dotted hostname.expected from the
// configuration. from says which; names is empty when there is nothing
// sensible to ask (resolving a bare short name tests the search list,
// not the servers).
func ProbeNames(root *fs.Root, live bool, cfg *config.Config) (names []string, from string) {
	if cfg != nil && len(cfg.DNS.Names) > 0 {
		return cfg.DNS.Names, "config dns.names"
	}
	if fqdn, src := MachineFQDN(root, live); fqdn != "" {
		return []string{fqdn}, "the machine's FQDN (" + src + ")"
	}
	if cfg != nil && strings.Contains(strings.TrimSuffix(cfg.Hostname.Expected, "."), ".") {
		return []string{strings.TrimSuffix(cfg.Hostname.Expected, ".")}, "config hostname.expected"
	}
	return nil, ""
}
