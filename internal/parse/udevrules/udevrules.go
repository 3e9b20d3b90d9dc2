// Package udevrules reads udev's 70-persistent-net.rules, which older
// distributions (and images built on them) write to pin each NIC's MAC
// address to an interface name: rules of comma-separated KEY op "value"
// pairs as udev(7) defines them, of which a MAC match (ATTR{address}==)
// and NAME= matter here. Parsing is pure.
package udevrules

import (
	"fmt"
	"net"
	"regexp"
	"strings"
	"sync"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Rule is one rule: a MAC address pinned to an interface name.
type Rule struct {
	MAC  net.HardwareAddr
	Name string
	At   string // "file:line"
}

var udevPair = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Za-z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*(?:,|$)`)
})

// Parse parses 70-persistent-net.rules. Lines that are not a
// comma-separated list of KEY op "value" pairs are problems; rules
// without a MAC match (ATTR{address}==) are left out.
func Parse(name string, b []byte) ([]Rule, []problem.Problem) {
	var out []Rule
	var probs []problem.Problem
	bad := func(n int, msg string) { probs = append(probs, problem.Problem{File: name, Line: n, Msg: msg}) }
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		n := i + 1
		l = strings.TrimSuffix(l, "\r")
		if why := netval.BinaryLine(l); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' {
			continue
		}
		var r Rule
		var mac string
		ok := true
		for rest := t; strings.TrimSpace(rest) != ""; {
			m := udevPair().FindStringSubmatchIndex(rest)
			if m == nil {
				bad(n, "expected KEY==\"value\" pairs, got "+netval.Quote(strings.TrimSpace(rest)))
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
				bad(n, "ATTR{address} "+netval.Quote(mac)+" is not a MAC address")
			}
			continue
		}
		r.MAC, r.At = hw, fmt.Sprintf("%s:%d", name, n)
		out = append(out, r)
	}
	return out, probs
}
