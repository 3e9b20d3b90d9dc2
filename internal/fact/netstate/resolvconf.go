package netstate

import (
	"net/netip"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// ResolvConf is what the C library (and Go's resolver) takes from a
// resolv.conf file.
type ResolvConf struct {
	Nameservers []Nameserver
	Search      []string // the search list; "domain" sets a one-entry list
	Options     []string
}

// Nameserver is one "nameserver" line.
type Nameserver struct {
	Addr netip.Addr // may carry an IPv6 zone (fe80::1%eth0)
	Line int
}

// GlibcMaxNameservers is how many nameserver lines the C library uses
// (MAXNS); later ones are silently ignored.
const GlibcMaxNameservers = 3

// ParseResolvConf parses resolv.conf bytes the way glibc's res_init reads
// them: a keyword at the start of a line, comments starting with '#' or
// ';'. name is used in problems. Lines glibc would ignore or misread
// (unknown keywords, bad addresses, binary junk) are reported as problems
// and skipped, so one bad line never hides the rest of the file.
func ParseResolvConf(name string, b []byte) (ResolvConf, []problem.Problem) {
	var rc ResolvConf
	var probs []problem.Problem
	bad := func(n int, msg string) { probs = append(probs, problem.Problem{File: name, Line: n, Msg: msg}) }
	for i, l := range lines(b) {
		n := i + 1
		if why := netval.BinaryLine(l); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		f := strings.Fields(t)
		switch kw, args := f[0], f[1:]; kw {
		case "nameserver":
			if len(args) == 0 {
				bad(n, "nameserver without an address")
				continue
			}
			a, err := netip.ParseAddr(args[0])
			if err != nil {
				bad(n, "nameserver "+netval.Quote(args[0])+" is not an IP address")
				continue
			}
			rc.Nameservers = append(rc.Nameservers, Nameserver{Addr: a, Line: n})
		case "domain":
			if len(args) == 0 {
				bad(n, "domain without a name")
				continue
			}
			// glibc: the last of "domain" and "search" wins.
			rc.Search = []string{args[0]}
		case "search":
			if len(args) == 0 {
				bad(n, "search without a domain")
				continue
			}
			rc.Search = append([]string(nil), args...)
		case "options":
			rc.Options = append(rc.Options, args...)
		case "sortlist":
			// Valid but irrelevant to which servers are asked.
		default:
			bad(n, "unknown keyword "+netval.Quote(kw)+" (the C library ignores this line)")
		}
	}
	return rc, probs
}

// Addrs returns the nameserver addresses in file order.
func (rc ResolvConf) Addrs() []netip.Addr {
	out := make([]netip.Addr, len(rc.Nameservers))
	for i, ns := range rc.Nameservers {
		out[i] = ns.Addr
	}
	return out
}

// lines splits b into lines without their terminators. A final line
// without a newline is kept.
func lines(b []byte) []string {
	s := strings.Split(string(b), "\n")
	if len(s) > 0 && s[len(s)-1] == "" {
		s = s[:len(s)-1]
	}
	for i, l := range s {
		s[i] = strings.TrimSuffix(l, "\r")
	}
	return s
}
