package hostname

import (
	"bytes"
	"fmt"
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
