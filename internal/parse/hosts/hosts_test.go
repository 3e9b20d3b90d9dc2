package hosts

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	in := `# The following lines are desirable for IPv4 capable hosts
127.0.0.1	localhost
127.0.1.1 web1.example.com web1   # added by cloud-init

::1     localhost ip6-localhost ip6-loopback
fe80::1%eth0 linklocal
127.0.1.l typo
192.0.2.10
   # indented comment
2001:db8::5 v6host
`
	entries, err := Parse([]byte(in))
	want := []Entry{
		{Line: 2, Addr: netip.MustParseAddr("127.0.0.1"), Names: []string{"localhost"}},
		{Line: 3, Addr: netip.MustParseAddr("127.0.1.1"), Names: []string{"web1.example.com", "web1"}},
		{Line: 5, Addr: netip.MustParseAddr("::1"), Names: []string{"localhost", "ip6-localhost", "ip6-loopback"}},
		{Line: 6, Addr: netip.MustParseAddr("fe80::1%eth0"), Names: []string{"linklocal"}},
		{Line: 10, Addr: netip.MustParseAddr("2001:db8::5"), Names: []string{"v6host"}},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("entries = %+v\nwant %+v", entries, want)
	}
	var he *Error
	if !errors.As(err, &he) {
		t.Fatalf("error = %v, want *Error", err)
	}
	if len(he.Problems) != 2 ||
		he.Problems[0].Line != 7 || !strings.Contains(he.Problems[0].Msg, `invalid address "127.0.1.l"`) ||
		!reflect.DeepEqual(he.Problems[0].Fields, []string{"127.0.1.l", "typo"}) ||
		he.Problems[1].Line != 8 || !strings.Contains(he.Problems[1].Msg, "has no names") {
		t.Errorf("problems = %+v", he.Problems)
	}
	if got := err.Error(); got != `line 7: invalid address "127.0.1.l"; line 8: address 192.0.2.10 has no names` {
		t.Errorf("Error() = %q", got)
	}

	for _, clean := range []string{"", "\n", "# nothing\n", "127.0.0.1 localhost"} {
		if _, err := Parse([]byte(clean)); err != nil {
			t.Errorf("Parse(%q) error = %v, want nil", clean, err)
		}
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	entries, _ := Parse([]byte("127.0.0.1 localhost\n127.0.1.1 Web1.Example.com web1\n192.0.2.7 web1 other\n"))
	got := Lookup(entries, "WEB1.")
	if len(got) != 2 || got[0].Line != 2 || got[1].Line != 3 {
		t.Errorf("Lookup(web1) = %+v, want lines 2 and 3", got)
	}
	if got := Lookup(entries, "web1.example.com"); len(got) != 1 || got[0].Line != 2 {
		t.Errorf("Lookup(fqdn) = %+v, want line 2", got)
	}
	if got := Lookup(entries, "web2"); got != nil {
		t.Errorf("Lookup(web2) = %+v, want none", got)
	}
	if got := Lookup(entries, ""); got != nil {
		t.Errorf("Lookup(\"\") = %+v, want none", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"127.0.0.1 localhost\n127.0.1.1 web1.example.com web1 # c\n",
		"::1 localhost ip6-localhost\nfe80::1%eth0 ll\n",
		"127.0.1.l typo\n192.0.2.1\n",
		"#only\n\n\t\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, err := Parse(b)
		lines := strings.Count(string(b), "\n") + 1
		for _, e := range entries {
			if e.Line < 1 || e.Line > lines || len(e.Names) == 0 || !e.Addr.IsValid() {
				t.Fatalf("bad entry %+v", e)
			}
			// "." (the DNS root) names no host, so it finds nothing.
			if normalize(e.Names[0]) != "" && len(Lookup(entries, e.Names[0])) == 0 {
				t.Fatalf("LookupHosts cannot find %q from line %d", e.Names[0], e.Line)
			}
		}
		if err != nil {
			var he *Error
			if !errors.As(err, &he) || len(he.Problems) == 0 {
				t.Fatalf("error %v is not a non-empty *Error", err)
			}
		}
	})
}
