package netcheck

import (
	"regexp"
	"strings"
)

// IfcfgVar is one assignment of an ifcfg file.
type IfcfgVar struct {
	Value string
	Line  int
}

var ifcfgKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ParseIfcfg parses a Red Hat or SUSE ifcfg file: shell-style KEY=value
// assignments, values optionally in single or double quotes, '#'
// comments. Anything else (commands, unterminated quotes) is a problem,
// because the network scripts would source it as shell.
func ParseIfcfg(name string, b []byte) (map[string]IfcfgVar, []Problem) {
	vars := map[string]IfcfgVar{}
	var probs []Problem
	bad := func(n int, msg string) { probs = append(probs, Problem{File: name, Line: n, Msg: msg}) }
	for i, l := range lines(b) {
		n := i + 1
		if why := binaryLine(l); why != "" {
			bad(n, "line "+why)
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || t[0] == '#' {
			continue
		}
		t = strings.TrimPrefix(t, "export ")
		k, v, ok := strings.Cut(t, "=")
		if !ok || !ifcfgKey.MatchString(k) {
			bad(n, "expected KEY=value, got "+quoteShort(t))
			continue
		}
		val, ok := shellValue(v)
		if !ok {
			bad(n, "unterminated quote in the value of "+k)
			continue
		}
		vars[k] = IfcfgVar{Value: val, Line: n}
	}
	return vars, probs
}

// shellValue unquotes a simple shell word: 'x', "x" (with \" \\ \$ \`
// escapes) or a bare word ending at whitespace or a comment.
func shellValue(v string) (string, bool) {
	if v == "" {
		return "", true
	}
	switch v[0] {
	case '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", false
		}
		return v[1 : 1+end], true
	case '"':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			c := v[i]
			if c == '\\' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0 {
				b.WriteByte(v[i+1])
				i++
				continue
			}
			if c == '"' {
				return b.String(), true
			}
			b.WriteByte(c)
		}
		return "", false
	}
	if i := strings.IndexAny(v, " \t#"); i >= 0 {
		v = v[:i]
	}
	return v, true
}
