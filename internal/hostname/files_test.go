package hostname

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParseEtcHostname(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{"web1\n", "web1", ""},
		{"  web1.example.com  \n", "web1.example.com", ""},
		{"# set by cloud-init\n\nweb1\n", "web1", ""},
		{"web1", "web1", ""},
		{"\r\nweb1\r\n", "web1", ""},
		{"", "", ""},
		{"\n\n# only a comment\n", "", ""},
		{"web1 web2\n", "", "line 1 holds several names"},
		{"web1\nweb2\n", "", "several names: line 1 and line 2"},
		{"web1\n# c\n\nweb2", "", "line 1 and line 4"},
		{"web1 # trailing comment\n", "", "several names"}, // not a comment to systemd
	}
	for _, tt := range tests {
		got, err := ParseEtcHostname([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseEtcHostname(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseEtcHostname(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseHosts(t *testing.T) {
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
	entries, err := ParseHosts([]byte(in))
	want := []HostsEntry{
		{Line: 2, Addr: netip.MustParseAddr("127.0.0.1"), Names: []string{"localhost"}},
		{Line: 3, Addr: netip.MustParseAddr("127.0.1.1"), Names: []string{"web1.example.com", "web1"}},
		{Line: 5, Addr: netip.MustParseAddr("::1"), Names: []string{"localhost", "ip6-localhost", "ip6-loopback"}},
		{Line: 6, Addr: netip.MustParseAddr("fe80::1%eth0"), Names: []string{"linklocal"}},
		{Line: 10, Addr: netip.MustParseAddr("2001:db8::5"), Names: []string{"v6host"}},
	}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("entries = %+v\nwant %+v", entries, want)
	}
	var he *HostsError
	if !errors.As(err, &he) {
		t.Fatalf("error = %v, want *HostsError", err)
	}
	if len(he.Problems) != 2 ||
		he.Problems[0].Line != 7 || !strings.Contains(he.Problems[0].Reason, `invalid address "127.0.1.l"`) ||
		!reflect.DeepEqual(he.Problems[0].Fields, []string{"127.0.1.l", "typo"}) ||
		he.Problems[1].Line != 8 || !strings.Contains(he.Problems[1].Reason, "has no names") {
		t.Errorf("problems = %+v", he.Problems)
	}
	if got := err.Error(); got != `line 7: invalid address "127.0.1.l"; line 8: address 192.0.2.10 has no names` {
		t.Errorf("Error() = %q", got)
	}

	for _, clean := range []string{"", "\n", "# nothing\n", "127.0.0.1 localhost"} {
		if _, err := ParseHosts([]byte(clean)); err != nil {
			t.Errorf("ParseHosts(%q) error = %v, want nil", clean, err)
		}
	}
}

func TestLookupHosts(t *testing.T) {
	t.Parallel()
	entries, _ := ParseHosts([]byte("127.0.0.1 localhost\n127.0.1.1 Web1.Example.com web1\n192.0.2.7 web1 other\n"))
	got := LookupHosts(entries, "WEB1.")
	if len(got) != 2 || got[0].Line != 2 || got[1].Line != 3 {
		t.Errorf("LookupHosts(web1) = %+v, want lines 2 and 3", got)
	}
	if got := LookupHosts(entries, "web1.example.com"); len(got) != 1 || got[0].Line != 2 {
		t.Errorf("LookupHosts(fqdn) = %+v, want line 2", got)
	}
	if got := LookupHosts(entries, "web2"); got != nil {
		t.Errorf("LookupHosts(web2) = %+v, want none", got)
	}
	if got := LookupHosts(entries, ""); got != nil {
		t.Errorf("LookupHosts(\"\") = %+v, want none", got)
	}
}

func TestParseNsswitch(t *testing.T) {
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
		{"#hosts: myhostname\npasswd: files\n", nil, false},
		{"hostsx: files\n", nil, false},
		{"hosts:\n", nil, true},
		{"", nil, false},
	}
	for _, tt := range tests {
		got, found := ParseNsswitch([]byte(tt.in), "hosts")
		if found != tt.wantFound || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseNsswitch(%q) = %q, %v, want %q, %v", tt.in, got, found, tt.want, tt.wantFound)
		}
	}
}
