package netcheck

import (
	"strings"
)

// INIEntry is one key=value assignment of an INI-style file.
type INIEntry struct {
	Section string
	Key     string
	Value   string
	Line    int
	// SectionLine is the line of the [section] header the entry follows,
	// which tells repeated sections ([Route], [Address]) apart.
	SectionLine int
}

// INI is a parsed INI-style file: systemd-networkd units and networkd.conf,
// NetworkManager keyfiles. Entries keep file order; repeated keys are kept.
type INI struct {
	File    string
	Entries []INIEntry
}

// ParseINI parses INI-style bytes. With continuation, a line ending in a
// backslash continues on the next (systemd syntax). Lines that are neither
// a comment, a [section] nor a key=value, and keys outside any section,
// are problems; the rest of the file is still read.
func ParseINI(name string, b []byte, continuation bool) (INI, []Problem) {
	f := INI{File: name}
	var probs []Problem
	bad := func(n int, msg string) { probs = append(probs, Problem{File: name, Line: n, Msg: msg}) }
	section, sectionLine := "", 0
	ls := lines(b)
	for i := 0; i < len(ls); i++ {
		n := i + 1
		l := ls[i]
		if why := binaryLine(l); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			if !strings.HasSuffix(t, "]") || len(t) < 3 {
				bad(n, "malformed section header "+quoteShort(t))
				section = ""
				continue
			}
			section, sectionLine = t[1:len(t)-1], n
			continue
		}
		for continuation && strings.HasSuffix(t, "\\") && i+1 < len(ls) {
			i++
			t = strings.TrimSuffix(t, "\\") + " " + strings.TrimSpace(ls[i])
		}
		k, v, ok := strings.Cut(t, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			bad(n, "expected key=value, got "+quoteShort(t))
			continue
		}
		if section == "" {
			bad(n, "key "+quoteShort(k)+" outside any [section]")
			continue
		}
		f.Entries = append(f.Entries, INIEntry{Section: section, Key: k, Value: strings.TrimSpace(v), Line: n, SectionLine: sectionLine})
	}
	return f, probs
}

// Get returns the last assignment of key in section (the one that wins).
func (f INI) Get(section, key string) (INIEntry, bool) {
	var e INIEntry
	found := false
	for _, x := range f.Entries {
		if x.Section == section && x.Key == key {
			e, found = x, true
		}
	}
	return e, found
}

// All returns every assignment of key in section, in file order.
func (f INI) All(section, key string) []INIEntry {
	var out []INIEntry
	for _, x := range f.Entries {
		if x.Section == section && x.Key == key {
			out = append(out, x)
		}
	}
	return out
}
