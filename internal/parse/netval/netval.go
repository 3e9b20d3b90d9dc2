// Package netval holds the values the network-configuration readers
// (netplan, networkd, nmconn, eni, ifcfg, udevrules) return, each with
// the place it was declared at, so that a finding can point the operator
// at the line, and the problems they report. One vocabulary for all of
// them lets network-config compare declarations across formats.
package netval

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Problem is one defect of a file, located by file and line. It is the
// shared problem.Problem; the name stays for the callers that declare it.
type Problem = problem.Problem

// MAC is a MAC address and its place.
type MAC struct {
	MAC net.HardwareAddr
	At  string // "file:line"
}

// Prefix is an address with its prefix length and place.
type Prefix struct {
	Prefix netip.Prefix
	At     string
}

// Addr is an IP address (a gateway, a nameserver) and its place. Metric
// is a default route's metric as written, "" for the default.
type Addr struct {
	Addr   netip.Addr
	At     string
	Metric string
}

// String is a string value (a search domain) and its place.
type String struct {
	Value string
	At    string
}

// Loc renders a place as "file:line".
func Loc(file string, line int) string { return fmt.Sprintf("%s:%d", file, line) }

// Quote quotes s for a message, cut so that a problem stays one readable
// line.
func Quote(s string) string {
	const max = 60
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strconv.Quote(s)
}

// BinaryLine says why a line cannot be text (a NUL byte, invalid UTF-8:
// corruption in a configuration file, not content); "" when it can.
func BinaryLine(l string) string {
	if strings.IndexByte(l, 0) >= 0 {
		return "contains a NUL byte"
	}
	if !utf8.ValidString(l) {
		return "is not valid UTF-8"
	}
	return ""
}
