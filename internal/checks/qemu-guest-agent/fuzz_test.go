package qemuguestagent

import (
	"reflect"
	"strings"
	"testing"
)

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"7.2.22", "8.2.0 (Debian 1:8.2)", "9.1", "10", ".1.2", "1..2", "99999999999999999999.1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseVersion(s)
		if ok != v.Known || (!ok && v != (Version{})) {
			t.Fatalf("ParseVersion(%q) = %+v, %v", s, v, ok)
		}
		if !ok {
			return
		}
		if v.Major < 0 || v.Minor < 0 || v.Micro < 0 {
			t.Fatalf("negative part in %+v", v)
		}
		// String is the canonical form and reads back as itself.
		if back, ok := ParseVersion(v.String()); !ok || back != v {
			t.Fatalf("%q -> %s -> %+v, %v", s, v, back, ok)
		}
		if v.Major < 1<<30 && v.Minor < 1<<30 && (!v.AtLeast(v.Major, v.Minor) || v.AtLeast(v.Major, v.Minor+1) || v.AtLeast(v.Major+1, 0)) {
			t.Fatalf("AtLeast is not an order around %s", v)
		}
	})
}

// FuzzParseArgsEnd holds ParseArgs to getopt's "--": once a command line
// parses, words after a final "--" change nothing.
func FuzzParseArgsEnd(f *testing.F) {
	f.Add("--allow-rpcs=a,b -F/h -vd -b x", "-m isa-serial")
	f.Add("-t /run/x --bl c --path=/dev/p", "--unknown")
	f.Fuzz(func(t *testing.T, line, tail string) {
		argv := strings.Fields(line)
		for _, ver := range []string{"7.2.0", "8.1.0", "9.1.0", ""} {
			v, _ := ParseVersion(ver)
			a, err := ParseArgs(v, argv)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("multi-line error %q", err)
				}
				continue
			}
			b, err := ParseArgs(v, append(append(append([]string(nil), argv...), "--"), strings.Fields(tail)...))
			if err != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("%q then -- %q: %+v, %v; without: %+v", argv, tail, b, err, a)
			}
			for _, s := range append([]string{a.Method, a.Path, a.StateDir, a.Config, a.Hook}, append(a.Block, a.Allow...)...) {
				if s != "" && !strings.Contains(line, s) {
					t.Fatalf("value %q is not on the command line %q", s, line)
				}
			}
		}
	})
}
