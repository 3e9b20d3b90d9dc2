// Package passwd parses the shadow-utils account databases: /etc/passwd,
// /etc/group and /etc/shadow. Each is colon-separated, one entry a line;
// lines with the wrong field count are reported as problems (with file
// name and line) and skipped, as getpwent(3) skips them. NIS "+"/"-" lines
// are skipped too. Parsing is pure.
package passwd

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

// Problem is one line that was skipped. It is the shared problem.Problem;
// the name stays so that callers' declarations read as before.
type Problem = problem.Problem

// User is one /etc/passwd entry.
type User struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
	Line     int
}

// Group is one /etc/group entry.
type Group struct {
	Name    string
	GID     int
	Members []string
	Line    int
}

// Shadow is one /etc/shadow entry. Hash is the password field; callers
// must never show it, only what Locked and HasPassword say about it.
type Shadow struct {
	Name string
	Hash string
	Line int
}

// Locked reports whether password login is locked: the field starts with
// "!" (passwd -l, usermod --lock) or is "*" (never had one).
func (s Shadow) Locked() bool {
	return strings.HasPrefix(s.Hash, "!") || strings.HasPrefix(s.Hash, "*")
}

// HasPassword reports whether a usable password hash is set.
func (s Shadow) HasPassword() bool { return s.Hash != "" && !s.Locked() }

// Describe says what the password field means without showing it.
func (s Shadow) Describe() string {
	switch {
	case s.Hash == "":
		return "empty (no password needed)"
	case s.Hash == "*" || s.Hash == "!" || s.Hash == "!*" || s.Hash == "!!":
		return "locked, no password set (" + s.Hash + ")"
	case strings.HasPrefix(s.Hash, "!"):
		return "locked (\"!\" before a password hash)"
	case strings.HasPrefix(s.Hash, "*"):
		return "locked (\"*\")"
	}
	return "password hash set, not locked"
}

// fields splits the non-comment lines of b into n colon fields each.
func fields(file string, b []byte, n int, each func(line int, f []string) string) []Problem {
	var probs []Problem
	for i, raw := range strings.Split(string(b), "\n") {
		ln := i + 1
		raw = strings.TrimSuffix(raw, "\r")
		if raw == "" || strings.HasPrefix(raw, "#") || strings.HasPrefix(raw, "+") || strings.HasPrefix(raw, "-") {
			continue
		}
		f := strings.Split(raw, ":")
		if len(f) != n {
			probs = append(probs, problem.Problem{File: file, Line: ln, Msg: fmt.Sprintf("%d fields, want %d", len(f), n)})
			continue
		}
		if f[0] == "" {
			probs = append(probs, problem.Problem{File: file, Line: ln, Msg: "empty name"})
			continue
		}
		if msg := each(ln, f); msg != "" {
			probs = append(probs, problem.Problem{File: file, Line: ln, Msg: msg})
		}
	}
	return probs
}

func id(s string) (int, bool) {
	v, err := strconv.ParseUint(s, 10, 32)
	return int(v), err == nil
}

// ParsePasswd parses /etc/passwd; file names it in problems.
func ParsePasswd(file string, b []byte) ([]User, []Problem) {
	var out []User
	probs := fields(file, b, 7, func(ln int, f []string) string {
		uid, ok1 := id(f[2])
		gid, ok2 := id(f[3])
		if !ok1 || !ok2 {
			return "uid or gid is not a number"
		}
		out = append(out, User{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6], Line: ln})
		return ""
	})
	return out, probs
}

// ParseGroup parses /etc/group.
func ParseGroup(file string, b []byte) ([]Group, []Problem) {
	var out []Group
	probs := fields(file, b, 4, func(ln int, f []string) string {
		gid, ok := id(f[2])
		if !ok {
			return "gid is not a number"
		}
		g := Group{Name: f[0], GID: gid, Line: ln}
		for _, m := range strings.Split(f[3], ",") {
			if m = strings.TrimSpace(m); m != "" {
				g.Members = append(g.Members, m)
			}
		}
		out = append(out, g)
		return ""
	})
	return out, probs
}

// ParseShadow parses /etc/shadow. Only the name and password field are
// kept: the check needs nothing else, and less secret data is held.
func ParseShadow(file string, b []byte) ([]Shadow, []Problem) {
	var out []Shadow
	probs := fields(file, b, 9, func(ln int, f []string) string {
		out = append(out, Shadow{Name: f[0], Hash: f[1], Line: ln})
		return ""
	})
	return out, probs
}

// DB is the three databases together, for lookups.
type DB struct {
	Users  []User
	Groups []Group
	Shadow []Shadow
}

// User returns the first entry named name, as getpwnam does.
func (d DB) User(name string) (User, bool) {
	for _, u := range d.Users {
		if u.Name == name {
			return u, true
		}
	}
	return User{}, false
}

// Group returns the first group named name.
func (d DB) Group(name string) (Group, bool) {
	for _, g := range d.Groups {
		if g.Name == name {
			return g, true
		}
	}
	return Group{}, false
}

// GroupByID returns the first group with gid.
func (d DB) GroupByID(gid int) (Group, bool) {
	for _, g := range d.Groups {
		if g.GID == gid {
			return g, true
		}
	}
	return Group{}, false
}

// ShadowOf returns the shadow entry of name.
func (d DB) ShadowOf(name string) (Shadow, bool) {
	for _, s := range d.Shadow {
		if s.Name == name {
			return s, true
		}
	}
	return Shadow{}, false
}

// GroupsOf lists the groups user belongs to: the primary group (by gid)
// and every group that lists the user as a member, as getgrouplist does.
func (d DB) GroupsOf(u User) []string {
	var out []string
	seen := map[string]bool{}
	if g, ok := d.GroupByID(u.GID); ok {
		out = append(out, g.Name)
		seen[g.Name] = true
	}
	for _, g := range d.Groups {
		if seen[g.Name] {
			continue
		}
		for _, m := range g.Members {
			if m == u.Name {
				out = append(out, g.Name)
				seen[g.Name] = true
				break
			}
		}
	}
	return out
}
