package hostname

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
)

var lineRE = regexp.MustCompile(`line (\d+)`)

// yamlLines bounds the lines of b as YAML counts them: CR, LF, CRLF and
// the Unicode breaks NEL, LS and PS each end a line.
func yamlLines(b []byte) int {
	n := 1
	for _, r := range string(b) {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

// lineOf returns the last line number an error names, or 0.
func lineOf(msg string) int {
	m := lineRE.FindAllStringSubmatch(msg, -1)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

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
			return
		}
		// What cloud-init writes from these names reads back as them.
		out, _ := json.Marshal(s)
		if back, err := ParseSetHostname(out); err != nil || back != s {
			t.Fatalf("%+v written as %s reads %+v, %v", s, out, back, err)
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
			if ln := lineOf(err.Error()); ln > yamlLines(b) {
				t.Fatalf("error %q names a line past the input", err)
			}
			return
		}
		// One reading: the shared parser's value under cloud-init's
		// translate_bool is what the check sees.
		d, err := cloudconfig.Parse("f", b)
		if err != nil {
			t.Fatalf("hostname accepted what cloudconfig refuses: %v", err)
		}
		if v, ok := d.Value["preserve_hostname"]; ok != (c.PreserveHostname != nil) || (ok && *c.PreserveHostname != cloudconfig.TranslateBool(v)) {
			t.Fatalf("preserve_hostname %#v read as %v", v, c.PreserveHostname)
		}
		// Whatever was parsed must merge and derive without surprises.
		e := Merge(Layer{"fuzz", c})
		if r, ok := Requested(e, "meta", "m"); ok && r.Hostname == "" && r.FQDN == "" {
			t.Fatalf("empty request from %+v", e)
		}
	})
}
