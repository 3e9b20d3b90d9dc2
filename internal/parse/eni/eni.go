// Package eni parses ifupdown's /etc/network/interfaces and the files it
// includes, as interfaces(5) defines them: "iface NAME FAMILY METHOD"
// stanzas and their option lines, "auto", "allow-*", "mapping",
// "no-auto-down" and "no-scripts" stanzas, "source" and
// "source-directory" includes, '#' comments only at the start of a line,
// and "\" at the end of a line continuing it. Parsing is pure: Include
// and SourceDirName tell the caller which files the includes name, and
// the caller reads them.
package eni

import (
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/netval"
	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Option is one option line of a stanza.
type Option struct {
	Key, Value string
	Line       int
}

// Stanza is one "iface" stanza.
type Stanza struct {
	Name, Family, Method string
	At                   string // "file:line"
	Options              []Option
}

// File is one parsed interfaces(5) file.
type File struct {
	Name     string
	Stanzas  []Stanza
	Auto     []string // auto and allow-auto
	Hotplug  []string // allow-hotplug
	Sources  []string // "source" patterns, as written
	SrcDirs  []string // "source-directory" directories, as written
	Mappings []string // interfaces with a "mapping" stanza (not judged)
}

// Parse parses one interfaces(5) file. Unknown stanzas and option lines
// before any stanza are problems.
func Parse(name string, b []byte) (File, []problem.Problem) {
	f := File{Name: name}
	var probs []problem.Problem
	bad := func(n int, msg string) { probs = append(probs, problem.Problem{File: name, Line: n, Msg: msg}) }
	ls := strings.Split(string(b), "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	for i := range ls {
		ls[i] = strings.TrimSuffix(ls[i], "\r")
	}
	var cur *Stanza
	inMapping := false
	for i := 0; i < len(ls); i++ {
		n := i + 1
		if why := netval.BinaryLine(ls[i]); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(ls[i])
		for strings.HasSuffix(t, "\\") && i+1 < len(ls) {
			i++
			t = strings.TrimSuffix(t, "\\") + " " + strings.TrimSpace(ls[i])
		}
		// A continuation of blanks leaves no word (main's parser panicked).
		if t = strings.TrimSpace(t); t == "" || t[0] == '#' {
			continue
		}
		w := strings.Fields(t)
		stanza := func() { inMapping, cur = false, nil }
		switch w[0] {
		case "iface":
			stanza()
			if len(w) < 4 {
				bad(n, "iface needs a name, an address family and a method: "+netval.Quote(t))
				continue
			}
			f.Stanzas = append(f.Stanzas, Stanza{Name: w[1], Family: w[2], Method: w[3], At: fmt.Sprintf("%s:%d", name, n)})
			cur = &f.Stanzas[len(f.Stanzas)-1]
		case "auto", "allow-auto":
			stanza()
			f.Auto = append(f.Auto, w[1:]...)
		case "allow-hotplug":
			stanza()
			f.Hotplug = append(f.Hotplug, w[1:]...)
		case "source":
			stanza()
			f.Sources = append(f.Sources, w[1:]...)
		case "source-directory":
			stanza()
			f.SrcDirs = append(f.SrcDirs, w[1:]...)
		case "mapping":
			stanza()
			inMapping = true
			f.Mappings = append(f.Mappings, w[1:]...)
		case "no-auto-down", "no-scripts":
			stanza()
		default:
			if strings.HasPrefix(w[0], "allow-") {
				stanza()
				continue
			}
			if inMapping {
				continue // script, map lines
			}
			if cur == nil {
				bad(n, "option "+netval.Quote(w[0])+" outside any iface stanza")
				continue
			}
			cur.Options = append(cur.Options, Option{Key: w[0], Value: strings.Join(w[1:], " "), Line: n})
		}
	}
	return f, probs
}

// Include returns the path a "source" or "source-directory" argument
// names when written in the file at from: relative paths are relative to
// that file's directory. The result may hold shell wildcards.
func Include(from, arg string) string {
	if path.IsAbs(arg) {
		return path.Clean(arg)
	}
	return path.Join(path.Dir(from), arg)
}

// SourceDirName reports whether source-directory includes a file of that
// name: only ASCII letters, digits, '_' and '-', as run-parts(8) takes.
func SourceDirName(n string) bool {
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return n != ""
}

// Prefix reads a stanza's address: "192.0.2.10/24", or an address with
// a netmask (dotted or a length). Without one, the address is a host
// address (/32, /128).
func Prefix(addr, netmask, family string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(addr); err == nil {
		return p, true
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return netip.Prefix{}, false
	}
	if netmask == "" {
		if family == "inet6" {
			return netip.PrefixFrom(a, 128), true
		}
		return netip.PrefixFrom(a, 32), true
	}
	bits, err := strconv.Atoi(netmask)
	if err != nil {
		m, merr := netip.ParseAddr(netmask)
		if merr != nil || !m.Is4() {
			return netip.Prefix{}, false
		}
		ones, size := net.IPMask(m.AsSlice()).Size()
		if size != 32 {
			return netip.Prefix{}, false
		}
		bits = ones
	}
	if bits < 0 || bits > a.BitLen() {
		return netip.Prefix{}, false
	}
	return netip.PrefixFrom(a, bits), true
}

// HWAddress is a stanza's hwaddress option: the MAC the interface is
// given ("hwaddress [ether] MAC", interfaces(5)), the same on every copy
// of the file. ok is false without one, or with a value that is no MAC
// (ifupdown2's "random" among them).
func (s Stanza) HWAddress() (mac net.HardwareAddr, line int, ok bool) {
	for _, o := range s.Options {
		if o.Key != "hwaddress" {
			continue
		}
		w := strings.Fields(o.Value)
		if len(w) == 2 && w[0] == "ether" {
			w = w[1:]
		}
		if len(w) == 1 {
			if m, err := net.ParseMAC(w[0]); err == nil {
				return m, o.Line, true
			}
		}
	}
	return nil, 0, false
}
