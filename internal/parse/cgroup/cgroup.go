// Package cgroup parses /proc/PID/cgroup (cgroups(7)): one line per
// hierarchy, "ID:CONTROLLERS:PATH", and tells which unit of systemd a
// process runs in from the path of the hierarchy systemd manages. Parsing
// is pure.
package cgroup

import (
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Entry is one line: a hierarchy and the process's path in it.
type Entry struct {
	// ID is the hierarchy ID; 0 for the unified (v2) hierarchy.
	ID int
	// Controllers are the controllers bound to the hierarchy, or a named
	// hierarchy ("name=systemd"); none for the unified one.
	Controllers []string
	// Path is the process's cgroup, relative to the hierarchy's mount.
	Path string
	// Line is the 1-based line the entry came from.
	Line int
}

// Parse reads the file's bytes. A line that is not ID:CONTROLLERS:PATH
// with a numeric ID is a problem, and parsing goes on past it; empty
// lines are skipped.
func Parse(b []byte) ([]Entry, []problem.Problem) {
	var out []Entry
	var probs []problem.Problem
	for i, l := range strings.Split(string(b), "\n") {
		if l == "" {
			continue
		}
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			probs = append(probs, problem.At("", i+1, "%q is not ID:CONTROLLERS:PATH", l))
			continue
		}
		id, err := strconv.Atoi(parts[0])
		if err != nil || id < 0 {
			probs = append(probs, problem.At("", i+1, "hierarchy ID %q is not a number", parts[0]))
			continue
		}
		e := Entry{ID: id, Path: parts[2], Line: i + 1}
		if parts[1] != "" {
			e.Controllers = strings.Split(parts[1], ",")
		}
		out = append(out, e)
	}
	return out, probs
}

// Systemd reports whether the entry is a hierarchy systemd places units
// in: the unified one (no controllers) or cgroup v1's name=systemd.
func (e Entry) Systemd() bool {
	return len(e.Controllers) == 0 || (len(e.Controllers) == 1 && e.Controllers[0] == "name=systemd")
}

// Unit is the unit systemd runs the process in, from the first hierarchy
// systemd manages whose path names one: the path's last component that
// is a service or a scope ("/system.slice/guestcheck.service"), since a
// unit may nest cgroups of its own below it. "" when none names a unit
// (the root cgroup, or no systemd).
func Unit(es []Entry) string {
	for _, e := range es {
		if !e.Systemd() {
			continue
		}
		comps := strings.Split(e.Path, "/")
		for i := len(comps) - 1; i >= 0; i-- {
			c := comps[i]
			if strings.HasSuffix(c, ".service") || strings.HasSuffix(c, ".scope") {
				return c
			}
		}
	}
	return ""
}
