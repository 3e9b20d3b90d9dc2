package dhcplease

import (
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// DUID lengths (RFC 8415 11.1): a two-byte type and at most 128 bytes
// after it; every type carries at least one byte.
const (
	minDUID = 3
	maxDUID = 130
)

// ParseDUIDFile parses dhcpcd's DUID file (/etc/dhcpcd.duid, or
// /var/lib/dhcpcd/duid from dhcpcd 9): the DUID as colon-separated
// hexadecimal bytes on the first line that is not blank, as dhcpcd reads
// it. A file without one returns nil (dhcpcd makes a new DUID); a line
// that is not a DUID is a problem.
func ParseDUIDFile(name string, b []byte) ([]byte, []problem.Problem) {
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		d, err := ParseHex(line)
		if err != nil {
			return nil, []problem.Problem{problem.At(name, i+1, "not a DUID: %v", err)}
		}
		if len(d) < minDUID || len(d) > maxDUID {
			return nil, []problem.Problem{problem.At(name, i+1, "not a DUID: %d bytes, want %d to %d", len(d), minDUID, maxDUID)}
		}
		return d, nil
	}
	return nil, nil
}
