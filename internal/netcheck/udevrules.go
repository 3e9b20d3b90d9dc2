package netcheck

import (
	"net"
	"regexp"
	"strings"
	"sync"
)

// PersistentNetRule is one line of 70-persistent-net.rules: a MAC address
// pinned to an interface name.
type PersistentNetRule struct {
	MAC  net.HardwareAddr
	Name string
	At   string
}

var udevPair = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Za-z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*(?:,|$)`)
})

// ParsePersistentNetRules parses udev's 70-persistent-net.rules. Lines
// that are not a comma-separated list of KEY op "value" pairs are
// problems; lines without a MAC match (ATTR{address}==) are ignored.
func ParsePersistentNetRules(name string, b []byte) ([]PersistentNetRule, []Problem) {
	var out []PersistentNetRule
	var probs []Problem
	bad := func(n int, msg string) { probs = append(probs, Problem{File: name, Line: n, Msg: msg}) }
	for i, l := range lines(b) {
		n := i + 1
		if why := binaryLine(l); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' {
			continue
		}
		var r PersistentNetRule
		var mac string
		ok := true
		for rest := t; strings.TrimSpace(rest) != ""; {
			m := udevPair().FindStringSubmatchIndex(rest)
			if m == nil {
				bad(n, "expected KEY==\"value\" pairs, got "+quoteShort(strings.TrimSpace(rest)))
				ok = false
				break
			}
			key, op, val := rest[m[2]:m[3]], rest[m[4]:m[5]], rest[m[6]:m[7]]
			switch {
			case (key == "ATTR{address}" || key == "ATTRS{address}") && op == "==":
				mac = val
			case key == "NAME" && (op == "=" || op == ":="):
				r.Name = val
			}
			rest = rest[m[1]:]
		}
		if !ok || mac == "" {
			continue
		}
		hw, err := net.ParseMAC(mac)
		if err != nil {
			// udev allows globs here; a glob binds no single NIC.
			if !strings.ContainsAny(mac, "*?[") {
				bad(n, "ATTR{address} "+quoteShort(mac)+" is not a MAC address")
			}
			continue
		}
		r.MAC, r.At = hw, loc(name, n)
		out = append(out, r)
	}
	return out, probs
}
