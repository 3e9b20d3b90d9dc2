package hostname

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// The fuzz targets assert more than "no panic": each checks an invariant
// the check relies on.

func FuzzValidate(f *testing.F) {
	for _, s := range []string{"web1", "web1.example.com.", "-a", "a..b", "", strings.Repeat("a", 64), "x_y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := Validate(name)
		if err == nil {
			n := strings.TrimSuffix(name, ".")
			if n == "" || len(n) > MaxNameLen || strings.Contains(n, "..") || strings.ContainsAny(n, " _\x00") {
				t.Fatalf("Validate(%q) accepted an invalid name", name)
			}
			return
		}
		var ie *InvalidError
		if !errors.As(err, &ie) {
			t.Fatalf("Validate(%q) error %T is not *InvalidError", name, err)
		}
		if ie.Label < 0 || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Validate(%q) error %q: bad label index or multi-line", name, err)
		}
		_ = IsLocalhost(name)
		_ = Compare(name, "web1.example.com")
		_ = MatchRequest(name, "web1", "web1.example.com")
	})
}

func FuzzParseEtcHostname(f *testing.F) {
	for _, s := range []string{"web1\n", "# c\nweb1", "a b\n", "a\nb\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		name, err := ParseEtcHostname(b)
		if err == nil && strings.ContainsAny(name, " \t\n") {
			t.Fatalf("name %q contains whitespace", name)
		}
	})
}

func FuzzParseNsswitch(f *testing.F) {
	for _, s := range []string{"hosts: files [NOTFOUND=return] dns myhostname\n", "hosts:\n", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		srcs, found := ParseNsswitch(b, "hosts")
		if !found && srcs != nil {
			t.Fatalf("sources %q without a hosts line", srcs)
		}
		for _, s := range srcs {
			if s == "" || strings.ContainsAny(s, " \t\n\r") || s != strings.ToLower(s) {
				t.Fatalf("bad source %q", s)
			}
		}
	})
}

func FuzzParseSetHostname(f *testing.F) {
	for _, s := range []string{`{"hostname":"web1","fqdn":"web1.example.com"}`, `{"hostname":1}`, `{"hostname":"a"`, `[]`, ``, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSetHostname(b)
		if err != nil {
			if s != (SetHostname{}) {
				t.Fatalf("values %+v returned with error %v", s, err)
			}
			if strings.Contains(err.Error(), "Go value") {
				t.Fatalf("error leaks Go types: %v", err)
			}
		}
	})
}

func FuzzParseInstanceHostname(f *testing.F) {
	for _, s := range []string{
		`{"v1":{"local_hostname":"web1","local-hostname":"web1"}}`,
		`{"v1":{"local-hostname":"x"}}`, `{"v1":[]}`, `{"v1":{"local_hostname":5}}`, `{"v1":`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		name, err := ParseInstanceHostname(b)
		if err != nil && name != "" {
			t.Fatalf("name %q returned with error %v", name, err)
		}
		if err == nil && !utf8.ValidString(name) {
			// encoding/json replaces invalid UTF-8, so messages built from
			// the name stay printable.
			t.Fatalf("invalid UTF-8 in name %q", name)
		}
	})
}

func FuzzParseCloudConfig(f *testing.F) {
	for _, s := range []string{
		"#cloud-config\nhostname: web1\nfqdn: web1.example.com\npreserve_hostname: false\n",
		"preserve_hostname: yes\ncreate_hostname_file: off\nprefer_fqdn_over_hostname: 1\n",
		"a: &x [1, *x]\n", "hostname: [a]\n", "---\n---\n", "## template: jinja\nhostname: '{{ x }}'\n",
		"base: &b {hostname: a}\n<<: *b\n", "- 1\n", "{\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCloudConfig(b)
		if err != nil {
			if c != (CloudConfig{}) {
				t.Fatalf("values returned with error %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		// Whatever was parsed must merge and derive without surprises.
		e := Merge(Layer{"fuzz", c})
		if r, ok := Requested(e, "meta", "m"); ok && r.Hostname == "" && r.FQDN == "" {
			t.Fatalf("empty request from %+v", e)
		}
	})
}
