package identity

import (
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

// Where dhcpcd keeps what identifies the machine to DHCP servers, from
// the FILES section of dhcpcd(8) (and src/defs.h: DUID, SECRET,
// LEASEFILE). Up to dhcpcd 6 the DUID and the secret were in SYSCONFDIR
// (/etc/dhcpcd.duid, /etc/dhcpcd.secret) and the leases were
// DBDIR/dhcpcd-interface.lease with DBDIR /var/db; since dhcpcd 7 all
// of them are in DBDIR: duid, secret, interface-ssid.lease and .lease6.
// DBDIR is a build option (configure --dbdir): /var/db/dhcpcd by
// default, /var/lib/dhcpcd in the Linux distributions' packages.
var (
	// DhcpcdEtcFiles are dhcpcd 6's DUID and secret.
	DhcpcdEtcFiles = []string{"/etc/dhcpcd.duid", "/etc/dhcpcd.secret"}
	// DhcpcdDBDirs are dhcpcd 7's DBDIR, as distributions build it and
	// by default.
	DhcpcdDBDirs = []string{"/var/lib/dhcpcd", "/var/db/dhcpcd"}
	// DhcpcdOldDBDir is dhcpcd 6's default DBDIR, shared with other
	// programs: only its dhcpcd-*.lease and .lease6 are dhcpcd's.
	DhcpcdOldDBDir = "/var/db"
	// DhcpcdDUIDPaths are the files holding the DUID dhcpcd presents
	// ("Text file that holds the DUID used to identify the host").
	DhcpcdDUIDPaths = []string{"/etc/dhcpcd.duid", "/var/lib/dhcpcd/duid", "/var/db/dhcpcd/duid"}
)

// DhcpcdState says what dhcpcd file name is in a DBDIR (old: dhcpcd 6's
// /var/db), "" when it is none of dhcpcd's identity: the DUID, the
// secret ("a secret key known only to the host", which seeds the RFC
// 7217 stable private IPv6 addresses of `slaac private`,
// dhcpcd.conf(5)) or a lease.
func DhcpcdState(name string, old bool) string {
	lease := strings.HasSuffix(name, ".lease") || strings.HasSuffix(name, ".lease6")
	switch {
	case old:
		if lease && strings.HasPrefix(name, "dhcpcd-") {
			return "a dhcpcd lease"
		}
	case name == "duid" || name == "dhcpcd.duid":
		return "dhcpcd's DUID"
	case name == "secret" || name == "dhcpcd.secret":
		return "dhcpcd's secret, which seeds its stable private IPv6 addresses"
	case lease:
		return "a dhcpcd lease"
	}
	return ""
}

// ReadDHCPState lists the DHCP client state in the root that identifies
// the machine to DHCP servers, which a sealed template must not hold
// because every clone would present it: dhcpcd's DUID, secret and
// leases, ISC dhclient's and NetworkManager's leases. Each entry is a
// guest path and what it is. sealprep's dhcp-leases operation removes
// every one of them (regular files are listed; it removes links too).
func ReadDHCPState(r fs.Reader) []string {
	var out []string
	kept := func(e fs.Entry) bool { return e.Kind == fs.KindRegular }
	for _, p := range DhcpcdEtcFiles {
		if e, err := r.Lstat(p); err == nil && kept(e) {
			out = append(out, p+" ("+DhcpcdState(path.Base(p), false)+")")
		}
	}
	list := func(dir string, what func(name string) string) {
		es, _ := r.ReadDir(dir)
		for _, e := range es {
			if w := what(e.Name); w != "" && kept(e) {
				out = append(out, path.Join(dir, e.Name)+" ("+w+")")
			}
		}
	}
	for _, d := range DhcpcdDBDirs {
		list(d, func(n string) string { return DhcpcdState(n, false) })
	}
	list(DhcpcdOldDBDir, func(n string) string { return DhcpcdState(n, true) })
	dhclient := func(n string) string {
		if strings.HasPrefix(n, "dhclient") && strings.HasSuffix(n, ".leases") {
			return "a dhclient lease"
		}
		return ""
	}
	list("/var/lib/dhcp", dhclient)
	list("/var/lib/dhclient", dhclient)
	list("/var/lib/NetworkManager", func(n string) string {
		if strings.HasSuffix(n, ".lease") {
			return "a NetworkManager lease"
		}
		return ""
	})
	return out
}
