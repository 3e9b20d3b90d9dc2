package hostname

import (
	"reflect"
	"testing"
)

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
