// Package dpkgstatus parses dpkg's database of package states,
// /var/lib/dpkg/status (deb822 stanzas separated by blank lines). Only the
// fields that say whether a package is installed, and which version, are
// kept. Parsing is pure.
package dpkgstatus

import (
	"path"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Path is the status database.
const Path = "/var/lib/dpkg/status"

// Package is one stanza.
type Package struct {
	Name, Version, Arch string
	// Want, Flag and State are the three words of the Status field, e.g.
	// "install ok installed".
	Want, Flag, State string
	Provides          []string
	Line              int
}

// Installed reports whether dpkg considers the package installed and
// configured: state "installed" with flag "ok".
func (p Package) Installed() bool { return p.State == "installed" && p.Flag == "ok" }

// Upstream is the upstream part of Version, without the epoch before the
// first ':' and the Debian revision after the last '-' (deb-version(7)):
// "1:7.2+dfsg-7" gives "7.2+dfsg".
func (p Package) Upstream() string {
	v := p.Version
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		v = v[:i]
	}
	return v
}

// Status is the Status field as written.
func (p Package) Status() string { return strings.TrimSpace(p.Want + " " + p.Flag + " " + p.State) }

// Problem is a malformed line of Path. It is the shared problem.Problem;
// the name stays so that callers' declarations read as before.
type Problem = problem.Problem

// at is a problem at line ln of Path.
func at(ln int, msg string) Problem { return Problem{File: Path, Line: ln, Msg: msg} }

// Parse reads the whole database.
func Parse(b []byte) ([]Package, []Problem) {
	var out []Package
	var probs []Problem
	var cur *Package
	var key string
	flush := func() {
		if cur != nil {
			if cur.Name == "" {
				probs = append(probs, at(cur.Line, "stanza without a Package field"))
			} else {
				out = append(out, *cur)
			}
		}
		cur, key = nil, ""
	}
	// Line by line without strings.Split's slice of every line (a status
	// file has tens of thousands), and field names lowered without an
	// allocation when they are ASCII.
	rest := string(b)
	for ln, last := 1, false; !last; ln++ {
		var raw string
		var found bool
		raw, rest, found = strings.Cut(rest, "\n")
		last = !found
		raw = strings.TrimRight(raw, "\r")
		if strings.TrimSpace(raw) == "" {
			flush()
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			if key == "" {
				probs = append(probs, at(ln, "continuation line without a field"))
			}
			continue // continuation of a multi-line field (Description, Conffiles)
		}
		k, v, ok := strings.Cut(raw, ":")
		if !ok {
			probs = append(probs, at(ln, "line is not \"Field: value\""))
			continue
		}
		if cur == nil {
			cur = &Package{Line: ln}
		}
		key, v = lowerField(k), strings.TrimSpace(v)
		switch key {
		case "package":
			cur.Name = v
		case "version":
			cur.Version = v
		case "architecture":
			cur.Arch = v
		case "status":
			f := strings.Fields(v)
			if len(f) != 3 {
				probs = append(probs, at(ln, "Status has not three words"))
				continue
			}
			cur.Want, cur.Flag, cur.State = f[0], f[1], f[2]
		case "provides":
			for _, p := range strings.Split(v, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(p), " ")
				if name != "" {
					cur.Provides = append(cur.Provides, name)
				}
			}
		}
	}
	flush()
	return out, probs
}

// lowerField is strings.ToLower(k), without allocating for the ASCII
// field names dpkg writes: it returns the lowercase constant of the fields
// Parse reads, and k itself for the others (only whether it is empty
// matters for them).
func lowerField(k string) string {
	for i := 0; i < len(k); i++ {
		if k[i] >= 0x80 {
			return strings.ToLower(k)
		}
	}
	for _, f := range [...]string{"package", "version", "architecture", "status", "provides"} {
		if len(k) == len(f) && asciiEqualFold(k, f) {
			return f
		}
	}
	return k
}

// asciiEqualFold compares ASCII k with lowercase f, ignoring k's case.
func asciiEqualFold(k, f string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != f[i] {
			return false
		}
	}
	return true
}

// Find returns the stanzas for name: "name" or "name:arch". A package
// may have several stanzas (one per architecture).
func Find(pkgs []Package, name string) []Package {
	base, arch, _ := strings.Cut(name, ":")
	var out []Package
	for _, p := range pkgs {
		if p.Name == base && (arch == "" || arch == p.Arch || p.Arch == "all") {
			out = append(out, p)
		}
	}
	return out
}

// VersionMatches reports whether an installed version satisfies an apt
// pin "name=version": apt takes the version literally, with '*' as a glob.
func VersionMatches(installed, pin string) bool {
	if strings.ContainsAny(pin, "*?[") {
		ok, err := path.Match(pin, installed)
		return err == nil && ok
	}
	return installed == pin
}
