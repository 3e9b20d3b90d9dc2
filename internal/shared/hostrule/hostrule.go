// Package hostrule is the RFC 1123 host name rule, alone so that the
// configuration (hostname.expected) and the hostname check judge a name
// by the same code: the configuration cannot import a check.
package hostrule

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
