// Package selinuxconfig reads /etc/selinux/config the way libselinux
// does (selinux_config.c), which is what decides the mode and policy at
// boot; shell scripts also source the file, but they do not decide.
//
//   - SELINUX= counts only on a line that starts with it exactly (case
//     and position matter); blanks after "=" are skipped and the value
//     matches "enforcing", "permissive" or "disabled" by prefix, in any
//     case. The first line that matches wins; one with another value is
//     passed over.
//   - SELINUXTYPE= may be indented and written in any case; '#' lines
//     are comments. The value is the rest of the line without leading
//     blanks and trailing blanks or control characters, quotes included.
//     The last one wins.
//
// Parsing is pure.
package selinuxconfig

import (
	"strings"
	"unicode"
)

// Config is what libselinux reads from the file.
type Config struct {
	// Mode is "enforcing", "permissive", "disabled", or "" when no
	// SELINUX= line names one.
	Mode     string
	ModeLine int
	// Type is the policy name ("targeted"), "" when no SELINUXTYPE= line
	// is there (libselinux then uses "targeted").
	Type     string
	TypeLine int
}

// Parse reads the bytes of /etc/selinux/config.
func Parse(b []byte) Config {
	var c Config
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		if c.Mode == "" {
			if v, ok := strings.CutPrefix(line, "SELINUX="); ok {
				v = strings.TrimLeftFunc(v, isSpace)
				for _, m := range []string{"enforcing", "permissive", "disabled"} {
					if len(v) >= len(m) && strings.EqualFold(v[:len(m)], m) {
						c.Mode, c.ModeLine = m, n
						break
					}
				}
			}
		}
		t := strings.TrimLeftFunc(line, isSpace)
		if t == "" || t[0] == '#' {
			continue
		}
		const tag = "SELINUXTYPE="
		if len(t) >= len(tag) && strings.EqualFold(t[:len(tag)], tag) {
			v := strings.TrimLeftFunc(t[len(tag):], isSpace)
			// libselinux keeps the first character even when it is a
			// blank: it trims from the end down to, not through, it.
			for len(v) > 1 && (isSpace(rune(v[len(v)-1])) || v[len(v)-1] < 0x20 || v[len(v)-1] == 0x7f) {
				v = v[:len(v)-1]
			}
			c.Type, c.TypeLine = v, n
		}
	}
	return c
}

// isSpace is C's isspace in the C locale.
func isSpace(r rune) bool { return r < 0x80 && unicode.IsSpace(r) }
