package authkeys

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: every line is a key, a blank or comment, or a problem naming
// it; a key's line parses alone to the same key.
func FuzzParse(f *testing.F) {
	f.Add("# keys\n" + ops + "\n\nssh-rsa notbase64!\n")
	f.Add(`command="echo a b",no-pty ` + ops + "\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		keys, probs := Parse([]byte(s))
		lines := strings.Split(s, "\n")
		seen := map[int]bool{}
		for _, k := range keys {
			if k.Line < 1 || k.Line > len(lines) || seen[k.Line] {
				t.Fatalf("key on line %d of %d (or twice)", k.Line, len(lines))
			}
			seen[k.Line] = true
			alone, err := ParseLine(lines[k.Line-1])
			alone.Line = k.Line
			if err != nil || !reflect.DeepEqual(alone, k) {
				t.Fatalf("line %d alone reads %+v, %v; in the file %+v", k.Line, alone, err, k)
			}
		}
		for _, p := range probs {
			if p.Line < 1 || p.Line > len(lines) || seen[p.Line] || p.Msg == "" || strings.Contains(p.Msg, "\n") {
				t.Fatalf("bad problem %+v", p)
			}
			seen[p.Line] = true
		}
		for i, l := range lines {
			if t2 := strings.TrimSpace(l); !seen[i+1] && t2 != "" && !strings.HasPrefix(t2, "#") {
				t.Fatalf("line %d %q is neither a key nor a problem", i+1, l)
			}
		}
	})
}
