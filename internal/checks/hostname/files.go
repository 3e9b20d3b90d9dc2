package hostname

import (
	"bytes"
	"strings"
)

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
