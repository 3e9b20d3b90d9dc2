package hostname

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	label63 := strings.Repeat("a", 63)
	tests := []struct {
		name      string
		wantLabel int    // -1: valid
		wantIn    string // substring of the error
	}{
		{"web1", -1, ""},
		{"web-1.example.com", -1, ""},
		{"WEB1.Example.COM", -1, ""},
		{"1host", -1, ""},
		{"web1.example.com.", -1, ""}, // trailing root dot accepted
		{label63, -1, ""},
		{strings.Repeat(label63+".", 3) + strings.Repeat("a", 61), -1, ""}, // exactly 253
		{"", 0, "is empty"},
		{".", 0, "is empty"},
		{strings.Repeat(label63+".", 3) + strings.Repeat("a", 62), 0, "254 characters"},
		{label63 + "a", 1, "64 characters"},
		{"-web", 1, "starts with '-'"},
		{"web.-x", 2, "starts with '-'"},
		{"web-", 1, "ends with '-'"},
		{"web_1", 1, `contains '_'`},
		{"ok.b_d.com", 2, `"b_d" contains '_'`},
		{"a..b", 2, "is empty"},
		{".a", 1, "is empty"},
		{"a b", 1, `contains ' '`},
		{"caf\xc3\xa9", 1, `contains 'Ã'`},
		{"web1..", 2, "is empty"},
		{"x\x00y", 1, `contains '\x00'`},
	}
	for _, tt := range tests {
		err := Validate(tt.name)
		if tt.wantLabel < 0 {
			if err != nil {
				t.Errorf("Validate(%q) = %v, want nil", tt.name, err)
			}
			continue
		}
		var ie *InvalidError
		if !errors.As(err, &ie) {
			t.Errorf("Validate(%q) = %v, want *InvalidError", tt.name, err)
			continue
		}
		if ie.Label != tt.wantLabel || !strings.Contains(err.Error(), tt.wantIn) {
			t.Errorf("Validate(%q) = label %d %q, want label %d containing %q", tt.name, ie.Label, err, tt.wantLabel, tt.wantIn)
		}
	}
}

func TestIsLocalhost(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"localhost":              true,
		"LOCALHOST":              true,
		"localhost.":             true,
		"localhost.localdomain":  true,
		"localhost6":             true,
		"localhost4.localdomain": true,
		"localhost-live":         true,
		"web1":                   false,
		"web1.localhost":         false,
		"mylocalhost":            false,
		"":                       false,
	} {
		if got := IsLocalhost(name); got != want {
			t.Errorf("IsLocalhost(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestShort(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"web1": "web1", "web1.example.com": "web1", "web1.": "web1", "": "", ".x": ""} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want Match
	}{
		{"web1", "web1", MatchExact},
		{"Web1", "wEB1.", MatchExact},
		{"web1.example.com", "WEB1.EXAMPLE.COM", MatchExact},
		{"web1", "web1.example.com", MatchShort},
		{"web1.example.com", "web1", MatchShort},
		{"web1.example.com", "web1.example.org", MatchNone},
		{"web1", "web2", MatchNone},
		{"web1", "web2.example.com", MatchNone},
		{"", "", MatchNone},
		{"web1", "", MatchNone},
	}
	for _, tt := range tests {
		if got := Compare(tt.a, tt.b); got != tt.want {
			t.Errorf("Compare(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestMatchRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, short, fqdn string
		want              Match
	}{
		{"web1", "web1", "", MatchExact},
		{"web1", "web1", "web1.example.com", MatchExact},
		{"web1.example.com", "web1", "web1.example.com", MatchExact}, // prefer_fqdn_over_hostname
		{"web1.example.com", "web1", "", MatchShort},                 // domain came from the cloud
		{"web1.example.org", "web1", "web1.example.com", MatchNone},  // wrong domain
		{"app", "app", "web1.example.com", MatchExact},               // hostname and fqdn both set
		{"web1", "app", "web1.example.com", MatchShort},
		{"web2", "web1", "web1.example.com", MatchNone},
		{"", "web1", "", MatchNone},
		{"web1", "", "", MatchNone},
	}
	for _, tt := range tests {
		if got := MatchRequest(tt.name, tt.short, tt.fqdn); got != tt.want {
			t.Errorf("MatchRequest(%q, %q, %q) = %v, want %v", tt.name, tt.short, tt.fqdn, got, tt.want)
		}
	}
	if MatchExact.String() != "exact" || MatchShort.String() != "short name" || MatchNone.String() != "none" {
		t.Error("Match.String words changed; reports and docs use them")
	}
}
