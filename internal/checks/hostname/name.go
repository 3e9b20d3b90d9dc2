// Package hostname is guestcheck's hostname check. Gather reads the facts
// once (the name files through hostnamefile, instance data through
// instancedata, cloud.cfg through cloudcfg, then /etc/hosts, DNS and
// nsswitch.conf for resolution); Judge decides from those Facts alone, so
// the rules are tested on Facts values. Beside them are the pure rules
// and parsers it needs: RFC 1123 validation and name comparison,
// nsswitch.conf, set-hostname, and the hostname keys of a cloud-config
// with cloud-init's layering.
package hostname

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/shared/hostrule"
)

// Limits from RFC 1035 section 2.3.4, which RFC 1123 keeps for host names.
const (
	MaxLabelLen = hostrule.MaxLabelLen
	MaxNameLen  = hostrule.MaxNameLen
)

// InvalidError says why a name is not a valid RFC 1123 host name, and
// which label is at fault.
type InvalidError = hostrule.InvalidError

// Validate reports whether name is a valid RFC 1123 host name (see
// hostrule.Validate, which the configuration's hostname.expected shares).
// The error is an *InvalidError.
func Validate(name string) error { return hostrule.Validate(name) }

// normalize folds case and drops one trailing dot: host names compare
// case-insensitively (RFC 4343) and "a.example." names the same host as
// "a.example".
func normalize(name string) string {
	return strings.ToLower(strings.TrimSuffix(strings.TrimSpace(name), "."))
}

// Short returns the first label of name ("web1" for "web1.example.com").
func Short(name string) string {
	n := strings.TrimSuffix(name, ".")
	if i := strings.IndexByte(n, '.'); i >= 0 {
		return n[:i]
	}
	return n
}

// IsLocalhost reports whether name is a placeholder that no delivered VM
// should carry: "localhost", "localhost.localdomain", "localhost6",
// "localhost-live" and every other name whose first label starts with
// "localhost" (compared case-insensitively). Such names are what a guest
// keeps when nothing, typically cloud-init, gave it a name.
func IsLocalhost(name string) bool {
	return strings.HasPrefix(Short(normalize(name)), "localhost")
}

// Match says how two host names correspond.
type Match int

// The possible results of Compare and MatchRequest.
const (
	// MatchNone means the names denote different hosts.
	MatchNone Match = iota
	// MatchExact means the names are equal, ignoring case and a trailing dot.
	MatchExact
	// MatchShort means one name is the other's first label ("web1" and
	// "web1.example.com"): Debian-style systems keep the short name in
	// the kernel while RHEL-style ones keep the FQDN, both correctly.
	MatchShort
)

// String returns the word used in reports.
func (m Match) String() string {
	switch m {
	case MatchExact:
		return "exact"
	case MatchShort:
		return "short name"
	}
	return "none"
}

// Compare matches two names case-insensitively, and accepts a short name
// against an FQDN whose first label it is. Two FQDNs must be equal: a
// different domain is a different host.
func Compare(a, b string) Match {
	a, b = normalize(a), normalize(b)
	if a == "" || b == "" {
		return MatchNone
	}
	if a == b {
		return MatchExact
	}
	aShort, bShort := !strings.Contains(a, "."), !strings.Contains(b, ".")
	if aShort != bShort && Short(a) == Short(b) {
		return MatchShort
	}
	return MatchNone
}

// MatchRequest matches name against the pair cloud-init works with: the
// short hostname and, when known, the FQDN. cloud-init applies one of the
// two depending on prefer_fqdn_over_hostname and the distro default, so
// either is exact. When the FQDN is known a dotted name must equal it;
// when it is not known (the domain came from the cloud), a dotted name
// whose first label is the short name matches as MatchShort.
func MatchRequest(name, short, fqdn string) Match {
	n := normalize(name)
	if n == "" {
		return MatchNone
	}
	s, f := normalize(short), normalize(fqdn)
	if n == s && s != "" || n == f && f != "" {
		return MatchExact
	}
	if !strings.Contains(n, ".") {
		if f != "" && n == Short(f) {
			return MatchShort
		}
		return MatchNone
	}
	if f == "" && s != "" && !strings.Contains(s, ".") && Short(n) == s {
		return MatchShort
	}
	return MatchNone
}
