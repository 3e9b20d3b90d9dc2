package hostname

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
)

// ParseEtcHostname returns the static hostname stored in /etc/hostname:
// the first line that is neither blank nor a comment, trimmed. An empty
// result with a nil error means the file names nobody, which systemd
// treats as "no static hostname". A second name, on the same line or a
// later one, is an error because tools disagree on which one wins.
func ParseEtcHostname(b []byte) (string, error) {
	name, first := "", 0
	for i, raw := range bytes.Split(b, []byte("\n")) {
		line := strings.TrimSpace(string(raw))
		if line == "" || line[0] == '#' {
			continue
		}
		if first != 0 {
			return "", fmt.Errorf("several names: line %d and line %d", first, i+1)
		}
		f := strings.Fields(line)
		if len(f) > 1 {
			return "", fmt.Errorf("line %d holds several names: %q", i+1, line)
		}
		name, first = f[0], i+1
	}
	return name, nil
}

// HostsEntry is one usable line of /etc/hosts.
type HostsEntry struct {
	// Line is the 1-based line number, for messages that point at it.
	Line int
	// Addr is the address; IPv6 may carry a zone ("fe80::1%eth0").
	Addr netip.Addr
	// Names are the canonical name and aliases, as written.
	Names []string
}

// LineError is one /etc/hosts line that resolvers skip.
type LineError struct {
	// Line is the 1-based line number.
	Line int
	// Fields are the line's words without the comment, so that callers
	// can tell whether a broken line was meant for a given name.
	Fields []string
	// Reason says what is wrong, e.g. `invalid address "127.0.1.l"`.
	Reason string
}

// Error reads "line N: reason".
func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// HostsError collects the lines of /etc/hosts that were skipped. Parsing
// goes on past them, as glibc and Go's resolver do.
type HostsError struct {
	Problems []LineError // in file order
}

// Error lists every skipped line on one line.
func (e *HostsError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Error()
	}
	return strings.Join(parts, "; ")
}

// ParseHosts parses /etc/hosts. It returns every usable entry; when some
// lines are unusable (bad address, address without names) it also returns
// a *HostsError listing them, so the entries stay usable either way.
func ParseHosts(b []byte) ([]HostsEntry, error) {
	var entries []HostsEntry
	var problems []LineError
	for i, raw := range bytes.Split(b, []byte("\n")) {
		line := string(raw)
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		addr, err := netip.ParseAddr(f[0])
		switch {
		case err != nil:
			problems = append(problems, LineError{Line: i + 1, Fields: f, Reason: fmt.Sprintf("invalid address %q", f[0])})
		case len(f) == 1:
			problems = append(problems, LineError{Line: i + 1, Fields: f, Reason: fmt.Sprintf("address %s has no names", f[0])})
		default:
			entries = append(entries, HostsEntry{Line: i + 1, Addr: addr, Names: f[1:]})
		}
	}
	if len(problems) > 0 {
		return entries, &HostsError{Problems: problems}
	}
	return entries, nil
}

// LookupHosts returns the entries that list name, in file order, matching
// case-insensitively and ignoring a trailing dot as resolvers do.
func LookupHosts(entries []HostsEntry, name string) []HostsEntry {
	want := normalize(name)
	if want == "" {
		return nil
	}
	var out []HostsEntry
	for _, e := range entries {
		for _, n := range e.Names {
			if normalize(n) == want {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// ParseNsswitch returns the sources configured for database db ("hosts")
// in nsswitch.conf, lower-cased and without [STATUS=action] items, and
// whether a line for db exists. When db appears more than once the last
// line wins, as in Go's resolver, which is the resolver guestcheck has.
func ParseNsswitch(b []byte, db string) (sources []string, found bool) {
	for _, raw := range bytes.Split(b, []byte("\n")) {
		line := string(raw)
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		key, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(key) != db {
			continue
		}
		found, sources = true, nil
		inAction := false
		for _, w := range strings.Fields(rest) {
			// Actions may contain spaces: "[ NOTFOUND = return ]".
			if strings.HasPrefix(w, "[") {
				inAction = true
			}
			if !inAction {
				sources = append(sources, strings.ToLower(w))
			}
			if strings.HasSuffix(w, "]") {
				inAction = false
			}
		}
	}
	return sources, found
}
