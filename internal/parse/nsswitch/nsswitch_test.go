package nsswitch

import (
	"reflect"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in        string
		want      []string
		wantFound bool
	}{
		{"passwd: files\nhosts: files dns\n", []string{"files", "dns"}, true},
		{"hosts:          files mdns4_minimal [NOTFOUND=return] dns myhostname\n", []string{"files", "mdns4_minimal", "dns", "myhostname"}, true},
		{"hosts: files [ NOTFOUND = return ] Resolve # comment myhostname\n", []string{"files", "resolve"}, true},
		{"hosts: files\nhosts: myhostname dns\n", []string{"myhostname", "dns"}, true}, // last line wins
		{"hosts:\tfiles\r\n", []string{"files"}, true},
		{"#hosts: myhostname\npasswd: files\n", nil, false},
		{"hostsx: files\n", nil, false},
		{"hosts:\n", nil, true},
		{"", nil, false},
	}
	for _, tt := range tests {
		es, _ := Parse([]byte(tt.in))
		got, found := Lookup(es, "hosts")
		if found != tt.wantFound || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Lookup(%q) = %q, %v, want %q, %v", tt.in, got, found, tt.want, tt.wantFound)
		}
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []problem.Problem
	}{
		{"hosts: files dns\n", nil},
		{"passwd: files\nhosts: [NOTFOUND=return] files\n", nil},
		{"# comment\n\n   \nhosts files\n", []problem.Problem{{Line: 4, Msg: "no ':' after a database name"}}},
		{"passwd: files\nhosts: files [NOTFOUND=return dns\n", []problem.Problem{{Line: 2, Msg: "a '[' action is not closed, so the sources after it are ignored"}}},
	}
	for _, tt := range tests {
		if _, ps := Parse([]byte(tt.in)); !reflect.DeepEqual(ps, tt.want) {
			t.Errorf("Parse(%q) problems = %v, want %v", tt.in, ps, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"hosts: files [NOTFOUND=return] dns myhostname\n", "hosts:\n", "x", "hosts: [a\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		es, ps := Parse(b)
		lines := strings.Count(string(b), "\n") + 1
		for _, p := range ps {
			if p.Line < 1 || p.Line > lines || p.Msg == "" {
				t.Fatalf("bad problem %+v", p)
			}
		}
		srcs, found := Lookup(es, "hosts")
		if !found && srcs != nil {
			t.Fatalf("sources %q without a hosts line", srcs)
		}
		// The last hosts line wins.
		es2, _ := Parse(append(append([]byte(nil), b...), "\nhosts: files DNS\n"...))
		if last, ok := Lookup(es2, "hosts"); !ok || strings.Join(last, ",") != "files,dns" {
			t.Fatalf("a last hosts line gave %q, %v", last, ok)
		}
		for _, e := range es {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry line %d of %d", e.Line, lines)
			}
			for _, s := range e.Sources {
				if s == "" || strings.ContainsAny(s, " \t\n\r") || s != strings.ToLower(s) {
					t.Fatalf("bad source %q", s)
				}
			}
		}
	})
}
