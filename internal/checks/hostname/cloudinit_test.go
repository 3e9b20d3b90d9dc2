package hostname

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSetHostname(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    SetHostname
		wantErr string
	}{
		{`{"hostname": "web1", "fqdn": "web1.example.com"}`, SetHostname{"web1", "web1.example.com"}, ""},
		{`{"fqdn": "web1.example.com", "hostname": "web1"}` + "\n", SetHostname{"web1", "web1.example.com"}, ""},
		{`{"hostname": "web1"}`, SetHostname{Hostname: "web1"}, ""},
		{`{"hostname": "web1", "fqdn": null}`, SetHostname{Hostname: "web1"}, ""},
		{`{"hostname": "web1", "extra": [1, 2]}`, SetHostname{Hostname: "web1"}, ""},
		{`{}`, SetHostname{}, ""},
		{"", SetHostname{}, ""},
		{" \n", SetHostname{}, ""},
		{`{"hostname": "web1", "fqdn": "web1.ex`, SetHostname{}, "unexpected end of JSON input"},
		{`{"hostname": 42}`, SetHostname{}, `"hostname" is a number, want a string`},
		{`{"fqdn": {"x": 1}}`, SetHostname{}, `"fqdn" is an object, want a string`},
		{`["web1"]`, SetHostname{}, "top level is an array, want an object"},
		{`"web1"`, SetHostname{}, "top level is a string, want an object"},
		{`garbage`, SetHostname{}, "invalid character"},
		{`{"hostname": "a"} trailing`, SetHostname{}, "invalid character 't' after top-level value"},
	}
	for _, tt := range tests {
		got, err := ParseSetHostname([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseSetHostname(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "json:") || strings.Contains(err.Error(), "Go value") {
				t.Errorf("ParseSetHostname(%q) error %q leaks encoding/json wording", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseSetHostname(%q) = %+v, %v, want %+v", tt.in, got, err, tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseCloudConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    CloudConfig
		wantErr string
		tmpl    bool
	}{
		{"processed user-data", "#cloud-config\n\n# from 1 files\n# part-001\n\n---\nhostname: web1\nfqdn: web1.example.com\nprefer_fqdn_over_hostname: true\nruncmd: [ls]\n",
			CloudConfig{Hostname: ptr("web1"), FQDN: ptr("web1.example.com"), PreferFQDNOverHostname: ptr(true)}, "", false},
		{"preserve true", "preserve_hostname: true\n", CloudConfig{PreserveHostname: ptr(true)}, "", false},
		{"preserve false", "preserve_hostname: false\n", CloudConfig{PreserveHostname: ptr(false)}, "", false},
		{"yaml 1.1 yes", "preserve_hostname: yes\ncreate_hostname_file: off\n", CloudConfig{PreserveHostname: ptr(true), CreateHostnameFile: ptr(false)}, "", false},
		{"quoted true", "preserve_hostname: \"True\"\n", CloudConfig{PreserveHostname: ptr(true)}, "", false},
		{"number 1", "preserve_hostname: 1\n", CloudConfig{PreserveHostname: ptr(true)}, "", false},
		{"other string", "preserve_hostname: maybe\n", CloudConfig{PreserveHostname: ptr(false)}, "", false},
		// translate_bool(None) is False, and a null in user-data wins over a
		// true below it as any value does; a null name is unset.
		{"null bool is false, null string unset", "preserve_hostname:\nhostname: ~\n", CloudConfig{PreserveHostname: ptr(false)}, "", false},
		// YAML 1.1 reads these as the integer 1, whose str() is "1".
		{"yaml 1.1 octal and hex one", "preserve_hostname: 01\nprefer_fqdn_over_hostname: 0x1\n", CloudConfig{PreserveHostname: ptr(true), PreferFQDNOverHostname: ptr(true)}, "", false},
		{"merge key", "base: &b {hostname: web7}\n<<: *b\n", CloudConfig{Hostname: ptr("web7")}, "", false},
		{"yaml 1.1 boolean name", "hostname: yes\n", CloudConfig{Hostname: ptr("True")}, "", false},
		{"numeric hostname", "hostname: 1234\n", CloudConfig{Hostname: ptr("1234")}, "", false},
		{"duplicate key, last wins", "hostname: a\nhostname: b\n", CloudConfig{Hostname: ptr("b")}, "", false},
		{"alias", "base: &n web9\nhostname: *n\n", CloudConfig{Hostname: ptr("web9")}, "", false},
		{"empty", "", CloudConfig{}, "", false},
		{"comments only", "#cloud-config\n# nothing\n", CloudConfig{}, "", false},
		{"explicit null document", "---\n~\n", CloudConfig{}, "", false},
		{"hostname list", "hostname:\n  - a\n", CloudConfig{}, "line 1: hostname is a sequence, want a string", false},
		{"preserve mapping", "preserve_hostname: {a: 1}\n", CloudConfig{}, "line 1: preserve_hostname is a mapping, want a boolean", false},
		{"top level list", "- hostname: a\n", CloudConfig{}, "line 1: top level is an array, not a mapping", false},
		{"top level scalar", "just text\n", CloudConfig{}, "line 1: top level is a string", false},
		{"syntax error", "hostname: [unclosed\n", CloudConfig{}, "line", false},
		{"tab indentation", "a:\n\tb: 1\n", CloudConfig{}, "line", false},
		{"two documents", "hostname: a\n---\nhostname: b\n", CloudConfig{}, "line 2: more than one YAML document", false},
		{"jinja, plain values", "## template: jinja\npreserve_hostname: true\n", CloudConfig{PreserveHostname: ptr(true)}, "", false},
		{"jinja expression", "## template: jinja\nhostname: \"{{ v1.local_hostname }}\"\n", CloudConfig{}, "template expression", true},
		{"jinja block breaks yaml", "## template: jinja\n{% if true %}\nhostname: a\n{% endif %}\n", CloudConfig{}, "jinja", true},
		{"jinja header, spaced and upper case", "  ##  TEMPLATE:\tJinja \r\nhostname: \"{{ x }}\"\n", CloudConfig{}, "template expression", true},
		{"one # is a comment, not a header", "# template: jinja\nhostname: \"{{ x }}\"\n", CloudConfig{Hostname: ptr("{{ x }}")}, "", false},
	}
	for _, tt := range tests {
		got, err := ParseCloudConfig([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error = %v, want %q", tt.name, err, tt.wantErr)
			} else if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error spans lines: %q", tt.name, err)
			}
			if errors.Is(err, ErrTemplate) != tt.tmpl {
				t.Errorf("%s: errors.Is(ErrTemplate) = %v, want %v", tt.name, !tt.tmpl, tt.tmpl)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: = %s, %v, want %s", tt.name, dump(got), err, dump(tt.want))
		}
	}
}

func dump(c CloudConfig) string {
	var b strings.Builder
	s := func(k string, p *string) {
		if p != nil {
			b.WriteString(k + "=" + *p + " ")
		}
	}
	f := func(k string, p *bool) {
		if p != nil {
			if *p {
				b.WriteString(k + "=true ")
			} else {
				b.WriteString(k + "=false ")
			}
		}
	}
	s("hostname", c.Hostname)
	s("fqdn", c.FQDN)
	f("preserve", c.PreserveHostname)
	f("prefer", c.PreferFQDNOverHostname)
	f("create", c.CreateHostnameFile)
	return "{" + b.String() + "}"
}

func TestMerge(t *testing.T) {
	t.Parallel()
	e := Merge()
	if e.PreserveHostname.Value || e.PreserveHostname.Set || !e.CreateHostnameFile.Value || e.CreateHostnameFile.Set {
		t.Errorf("defaults = %+v", e)
	}
	e = Merge(
		Layer{"/etc/cloud/cloud.cfg", CloudConfig{PreserveHostname: ptr(false), Hostname: ptr("base")}},
		Layer{"/etc/cloud/cloud.cfg.d/50-x.cfg", CloudConfig{PreserveHostname: ptr(true)}},
		Layer{"/etc/cloud/cloud.cfg.d/99-y.cfg", CloudConfig{CreateHostnameFile: ptr(false)}},
		Layer{"user-data", CloudConfig{Hostname: ptr("web1")}},
	)
	if want := (Setting[bool]{true, true, "/etc/cloud/cloud.cfg.d/50-x.cfg"}); e.PreserveHostname != want {
		t.Errorf("preserve = %+v, want %+v", e.PreserveHostname, want)
	}
	if want := (Setting[string]{"web1", true, "user-data"}); e.Hostname != want {
		t.Errorf("hostname = %+v, want %+v", e.Hostname, want)
	}
	if want := (Setting[bool]{false, true, "/etc/cloud/cloud.cfg.d/99-y.cfg"}); e.CreateHostnameFile != want {
		t.Errorf("create = %+v, want %+v", e.CreateHostnameFile, want)
	}
	e = Merge(Layer{"sys", CloudConfig{PreserveHostname: ptr(true)}}, Layer{"user", CloudConfig{PreserveHostname: ptr(false)}})
	if e.PreserveHostname.Value || e.PreserveHostname.Source != "user" {
		t.Errorf("user-data must override system config: %+v", e.PreserveHostname)
	}
}

func TestRequested(t *testing.T) {
	t.Parallel()
	set := func(v, src string) Setting[string] { return Setting[string]{v, true, src} }
	tests := []struct {
		name  string
		e     Effective
		local string
		want  Request
		ok    bool
	}{
		{"meta-data only", Effective{}, "vm-a", Request{Hostname: "vm-a", Source: "meta"}, true},
		{"nothing", Effective{}, "", Request{}, false},
		{"user hostname wins over meta-data", Effective{Hostname: set("web1", "ud")}, "vm-a", Request{Hostname: "web1", Source: "ud"}, true},
		{"dotted hostname is split", Effective{Hostname: set("web1.example.com", "ud")}, "vm-a",
			Request{Hostname: "web1", FQDN: "web1.example.com", Source: "ud"}, true},
		{"fqdn gives the short name", Effective{FQDN: set("web1.example.com", "ud")}, "vm-a",
			Request{Hostname: "web1", FQDN: "web1.example.com", Source: "ud"}, true},
		{"fqdn and hostname", Effective{FQDN: set("web1.example.com", "ud"), Hostname: set("app", "ud")}, "",
			Request{Hostname: "app", FQDN: "web1.example.com", Source: "ud"}, true},
		{"fqdn and hostname from two files", Effective{FQDN: set("web1.example.com", "ud"), Hostname: set("app", "cfg")}, "",
			Request{Hostname: "app", FQDN: "web1.example.com", Source: "ud (fqdn), cfg (hostname)"}, true},
		{"leading dot is not a domain", Effective{Hostname: set(".odd", "ud")}, "", Request{Hostname: ".odd", Source: "ud"}, true},
	}
	for _, tt := range tests {
		got, ok := Requested(tt.e, tt.local, "meta")
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: Requested = %+v, %v, want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
