// Package udevrules reads udev rules files: rules of comma-separated KEY
// op "value" pairs as udev(7) defines them (ParseLines), and on top of
// that 70-persistent-net.rules, which older distributions (and images
// built on them) write to pin each NIC's MAC address to an interface
// name (Parse). Parsing is pure.
package udevrules

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
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

// udevPair is one KEY op "value"; udev's own parser takes the comma
// between pairs as optional (systemd's rules carry lines joined by a
// backslash without one), so a pair ends at a comma, a blank or the end.
var udevPair = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Za-z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"(?:\s*,|\s+|$)`)
})

// Pair is one KEY op "value" of a rule: ATTR{online}, "=", "1".
type Pair struct {
	Key, Op, Value string
}

// Line is one rule of a rules file: its pairs in order, and where it is.
type Line struct {
	Pairs []Pair
	At    string // "file:line"
}

// Get returns the value of the first pair with key and op.
func (l Line) Get(key, op string) (string, bool) {
	for _, p := range l.Pairs {
		if p.Key == key && p.Op == op {
			return p.Value, true
		}
	}
	return "", false
}

// ParseLines parses a udev rules file into its rules, as udev(7) reads
// them: comments and blank lines skipped, a line ending in a backslash
// continued on the next, each rule a comma-separated list of KEY op
// "value" pairs. A line that is not such a list is a problem and is left
// out; the others are still read.
func ParseLines(name string, b []byte) ([]Line, []problem.Problem) {
	var out []Line
	var probs []problem.Problem
	bad := func(n int, msg string) { probs = append(probs, problem.Problem{File: name, Line: n, Msg: msg}) }
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		l := strings.TrimSuffix(lines[i], "\r")
		for strings.HasSuffix(l, "\\") && i+1 < len(lines) {
			i++
			l = strings.TrimSuffix(l, "\\") + strings.TrimSuffix(lines[i], "\r")
		}
		if why := netval.BinaryLine(l); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' {
			continue
		}
		r := Line{At: fmt.Sprintf("%s:%d", name, n)}
		ok := true
		for rest := t; strings.TrimSpace(rest) != ""; {
			m := udevPair().FindStringSubmatchIndex(rest)
			if m == nil {
				bad(n, "expected KEY==\"value\" pairs, got "+netval.Quote(strings.TrimSpace(rest)))
				ok = false
				break
			}
			r.Pairs = append(r.Pairs, Pair{rest[m[2]:m[3]], rest[m[4]:m[5]], rest[m[6]:m[7]]})
			rest = rest[m[1]:]
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, probs
}

// Parse parses 70-persistent-net.rules: the rules that match a MAC
// address (ATTR{address}==) and name the interface. Lines that are not
// a comma-separated list of KEY op "value" pairs are problems; rules
// without a MAC match are left out.
func Parse(name string, b []byte) ([]Rule, []problem.Problem) {
	lines, probs := ParseLines(name, b)
	var out []Rule
	for _, l := range lines {
		var r Rule
		var mac string
		for _, p := range l.Pairs {
			switch {
			case (p.Key == "ATTR{address}" || p.Key == "ATTRS{address}") && p.Op == "==":
				mac = p.Value
			case p.Key == "NAME" && (p.Op == "=" || p.Op == ":="):
				r.Name = p.Value
			}
		}
		if mac == "" {
			continue
		}
		hw, err := net.ParseMAC(mac)
		if err != nil {
			// udev allows globs here; a glob binds no single NIC.
			if !strings.ContainsAny(mac, "*?[") {
				file, line := splitAt(l.At)
				probs = append(probs, problem.Problem{File: file, Line: line, Msg: "ATTR{address} " + netval.Quote(mac) + " is not a MAC address"})
			}
			continue
		}
		r.MAC, r.At = hw, l.At
		out = append(out, r)
	}
	slices.SortStableFunc(probs, func(a, b problem.Problem) int { return a.Line - b.Line })
	return out, probs
}

// splitAt splits "file:line" back into its parts.
func splitAt(at string) (string, int) {
	i := strings.LastIndexByte(at, ':')
	n, _ := strconv.Atoi(at[i+1:])
	return at[:i], n
}
