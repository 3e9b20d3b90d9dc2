package hostname

import (
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
