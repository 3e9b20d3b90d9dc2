package hostnamefile

import (
	"fmt"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/hosts"
)

// MachineFQDN returns the machine's fully qualified domain name and where
// it was found, or "" when the machine has no domain. It follows what
// `hostname --fqdn` does with a files-only lookup: the hostname itself
// when it is dotted, else the first dotted name of the /etc/hosts line
// that lists the short name.
func MachineFQDN(root fs.Reader, live bool) (fqdn, source string) {
	src, host := Path, ""
	if live {
		src = KernelPath
		host, _ = ReadKernel(root)
	} else {
		host = ReadStatic(root).Name
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
