package netstate

import (
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		servers  []string
		search   []string
		options  []string
		problems []string // "line: substring"
	}{
		{name: "empty", in: ""},
		{name: "plain", in: "# comment\n; other comment\nnameserver 192.0.2.53\nnameserver 2001:db8::53\nsearch example.org example.net\noptions edns0 trust-ad\n",
			servers: []string{"192.0.2.53", "2001:db8::53"}, search: []string{"example.org", "example.net"}, options: []string{"edns0", "trust-ad"}},
		{name: "zone and trailing junk", in: "nameserver fe80::1%eth0\nnameserver 192.0.2.53 # inline\n",
			servers: []string{"fe80::1%eth0", "192.0.2.53"}},
		{name: "domain then search: last wins", in: "domain a.example\nsearch b.example\n", search: []string{"b.example"}},
		{name: "search then domain: last wins", in: "search b.example c.example\ndomain a.example\n", search: []string{"a.example"}},
		{name: "crlf and indentation", in: "nameserver 192.0.2.1\r\n  nameserver 192.0.2.2\r\n", servers: []string{"192.0.2.1", "192.0.2.2"}},
		{name: "bad lines keep the rest", in: "nameserver\nnameserver 192.0.2.300\nnameserve 192.0.2.1\nnameserver 198.51.100.53\nsearch\ndomain\nsortlist 192.0.2.0/255.255.255.0\n",
			servers:  []string{"198.51.100.53"},
			problems: []string{"1: without an address", "2: is not an IP address", "3: unknown keyword \"nameserve\"", "5: search without", "6: domain without"}},
		{name: "binary junk", in: "nameserver 192.0.2.1\n\x00\x01\x02\n\xff\xfe\n", servers: []string{"192.0.2.1"},
			problems: []string{"2: NUL byte", "3: not valid UTF-8"}},
		{name: "no final newline", in: "nameserver 192.0.2.9", servers: []string{"192.0.2.9"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc, probs := ParseResolvConf("/etc/resolv.conf", []byte(tc.in))
			var got []string
			for _, a := range rc.Addrs() {
				got = append(got, a.String())
			}
			if !slices.Equal(got, tc.servers) {
				t.Errorf("servers = %v, want %v", got, tc.servers)
			}
			if !slices.Equal(rc.Search, tc.search) {
				t.Errorf("search = %v, want %v", rc.Search, tc.search)
			}
			if !slices.Equal(rc.Options, tc.options) {
				t.Errorf("options = %v, want %v", rc.Options, tc.options)
			}
			if len(probs) != len(tc.problems) {
				t.Fatalf("problems = %v, want %d like %v", probs, len(tc.problems), tc.problems)
			}
			for i, want := range tc.problems {
				line, sub, _ := strings.Cut(want, ": ")
				s := probs[i].String()
				if !strings.HasPrefix(s, "/etc/resolv.conf:"+line+": ") || !strings.Contains(s, sub) {
					t.Errorf("problem %d = %q, want /etc/resolv.conf:%s: ...%s...", i, s, line, sub)
				}
			}
		})
	}
}

func FuzzParseResolvConf(f *testing.F) {
	f.Add([]byte("nameserver 192.0.2.53\nsearch example.org\noptions ndots:2\n"))
	f.Add([]byte("nameserver fe80::1%eth0\n# c\n;c\nnameserve x\n\x00"))
	f.Add([]byte("domain\nsearch\nnameserver\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rc, probs := ParseResolvConf("f", b)
		n := len(lines(b))
		for _, p := range probs {
			if p.Line < 1 || p.Line > n || !strings.HasPrefix(p.String(), "f:") {
				t.Fatalf("problem %q points outside the %d-line input", p, n)
			}
		}
		for _, ns := range rc.Nameservers {
			if !ns.Addr.IsValid() || ns.Line < 1 || ns.Line > n {
				t.Fatalf("bad nameserver %+v", ns)
			}
		}
	})
}

func TestReadResolverStack(t *testing.T) {
	t.Run("fixture roots", func(t *testing.T) {
		tests := []struct {
			root    string
			stub    bool
			servers []string // addr/upstream
			stack   string   // substring of Describe
		}{
			{"resolv-plain", false, []string{"192.0.2.53", "198.51.100.53"}, "/etc/resolv.conf: 192.0.2.53, 198.51.100.53"},
			{"resolv-stub", true, []string{"127.0.0.53", "192.0.2.53/up", "2001:db8::53/up"},
				"-> ../run/systemd/resolve/stub-resolv.conf: 127.0.0.53 (systemd-resolved stub); upstream"},
			{"resolv-stub-image", true, nil, "resolve/resolv.conf: missing"},
		}
		for _, tc := range tests {
			t.Run(tc.root, func(t *testing.T) {
				st := ReadResolverStack(openRoot(t, filepath.Join("testdata/roots", tc.root)))
				if st.Stub != tc.stub {
					t.Errorf("stub = %v", st.Stub)
				}
				var got []string
				for _, s := range st.Servers() {
					v := s.Addr.String()
					if s.Upstream {
						v += "/up"
					}
					got = append(got, v)
				}
				if tc.servers != nil && !slices.Equal(got, tc.servers) {
					t.Errorf("servers = %v, want %v", got, tc.servers)
				}
				if !strings.Contains(st.Describe(), tc.stack) {
					t.Errorf("Describe() = %q, want it to contain %q", st.Describe(), tc.stack)
				}
			})
		}
	})
	t.Run("dangling symlink", func(t *testing.T) {
		st := ReadResolverStack(writeRoot(t, map[string]string{"/etc/resolv.conf": "->/run/nowhere"}))
		if !st.Main.Missing || st.Main.Link != "/run/nowhere" {
			t.Errorf("got %+v", st.Main)
		}
	})
	t.Run("duplicates across the stack are probed once", func(t *testing.T) {
		st := ReadResolverStack(writeRoot(t, map[string]string{
			"/etc/resolv.conf":                 "nameserver 127.0.0.53\nnameserver 192.0.2.53\n",
			"/run/systemd/resolve/resolv.conf": "nameserver 192.0.2.53\nnameserver 198.51.100.53\n",
		}))
		var got []netip.Addr
		for _, s := range st.Servers() {
			got = append(got, s.Addr)
		}
		want := []netip.Addr{netip.MustParseAddr("127.0.0.53"), netip.MustParseAddr("192.0.2.53"), netip.MustParseAddr("198.51.100.53")}
		if !slices.Equal(got, want) {
			t.Errorf("servers = %v, want %v", got, want)
		}
	})
}
