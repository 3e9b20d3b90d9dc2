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
	"fmt"
	"strings"
)

// Limits from RFC 1035 section 2.3.4, which RFC 1123 keeps for host names.
const (
	MaxLabelLen = 63
	MaxNameLen  = 253 // without the optional trailing root dot
)

// InvalidError says why a name is not a valid RFC 1123 host name, and
// which label is at fault.
type InvalidError struct {
	// Name is the name as given.
	Name string
	// Label is the 1-based index of the bad label, or 0 when the fault is
	// the name as a whole (empty, too long).
	Label int
	// Value is the bad label.
	Value string
	// Reason is a short phrase such as "starts with '-'".
	Reason string
}

// Error says which label is bad and why, e.g. `label 2 "b_d" contains '_'`.
func (e *InvalidError) Error() string {
	if e.Label == 0 {
		return "name " + e.Reason
	}
	return fmt.Sprintf("label %d %q %s", e.Label, e.Value, e.Reason)
}

// Validate reports whether name is a valid RFC 1123 host name: dot-separated
// labels of 1-63 letters, digits and hyphens that neither start nor end with
// a hyphen, 253 characters at most. One trailing dot (the DNS root) is
// accepted and not counted. The error is an *InvalidError.
func Validate(name string) error {
	n := strings.TrimSuffix(name, ".")
	if n == "" {
		return &InvalidError{Name: name, Reason: "is empty"}
	}
	if len(n) > MaxNameLen {
		return &InvalidError{Name: name, Reason: fmt.Sprintf("is %d characters long, over the limit of %d", len(n), MaxNameLen)}
	}
	for i, l := range strings.Split(n, ".") {
		bad := func(reason string) error {
			return &InvalidError{Name: name, Label: i + 1, Value: l, Reason: reason}
		}
		switch {
		case l == "":
			return bad("is empty (a leading dot or two dots in a row)")
		case len(l) > MaxLabelLen:
			return bad(fmt.Sprintf("is %d characters long, over the limit of %d", len(l), MaxLabelLen))
		case l[0] == '-':
			return bad("starts with '-'")
		case l[len(l)-1] == '-':
			return bad("ends with '-'")
		}
		// Bytes, not runes: a multi-byte character is as invalid as its
		// first byte, and the message shows that byte unambiguously.
		for j := 0; j < len(l); j++ {
			if c := l[j]; !isLDH(c) {
				return bad(fmt.Sprintf("contains %q (only letters, digits and '-' are allowed)", rune(c)))
			}
		}
	}
	return nil
}

func isLDH(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-'
}

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
