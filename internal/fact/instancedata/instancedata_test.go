package instancedata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

func TestParse(t *testing.T) {
	in := `{
	 "_beta_keys": ["subplatform"],
	 "ds": {"meta_data": {"instance-id": "iid-1", "local-hostname": "meta-host"}, "_doc": "x"},
	 "v1": {"cloud_name": "nocloud", "instance_id": "iid-1", "local_hostname": "vm1",
	        "platform": "nocloud", "subplatform": "seed-dir (/dev/sr0)", "region": null,
	        "availability_zone": null, "distro": "debian", "distro_version": "13",
	        "distro_release": "trixie", "kernel_release": "6.12.0", "machine": "x86_64",
	        "public_ssh_keys": [], "variant": "debian"}
	}`
	d, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Data{HasV1: true, InstanceID: "iid-1", LocalHostname: "vm1", LocalHostnameKey: "v1.local_hostname", CloudName: "nocloud", Platform: "nocloud",
		Subplatform: "seed-dir (/dev/sr0)", Distro: "debian", DistroVersion: "13", DistroRelease: "trixie",
		KernelRelease: "6.12.0", Machine: "x86_64", MetaLocalHostname: "meta-host"}
	if *d != want {
		t.Errorf("got %+v\nwant %+v", *d, want)
	}
	for in, want := range map[string]string{
		`{"v1": {"local_hostname": 5}}`:  `"v1.local_hostname" is a number, want a string`,
		`{"v1": {"instance_id": ["a"]}}`: `"v1.instance_id" is an array, want a string`,
		`{"v1": []}`:                     `"v1" is an array, want an object`,
		`{"v1": null}`:                   `"v1" is null, want an object`,
		`{"ds": "x"}`:                    `"ds" is a string, want an object`,
		`{"ds": {"meta_data": 1}}`:       `"ds.meta_data" is a number, want an object`,
		`{"ds": {"meta_data": {"local-hostname": false}}}`: `"ds.meta_data.local-hostname" is a boolean, want a string`,
		`{"v1": {`:                          "unexpected end of JSON input",
		"{\"v1\": {\"machine\": \"\xff\"}}": "not valid UTF-8 (at byte 20)",
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
	// null ds and meta_data are tolerated (DataSourceNone has no meta-data).
	if d, err := Parse([]byte(`{"ds": {"meta_data": null}, "v1": {"region": null}}`)); err != nil || !d.HasV1 {
		t.Error(d, err)
	}
	if d, err := Parse([]byte(`{"ds": {}}`)); err != nil || d.HasV1 {
		t.Errorf("no v1: %+v, %v", d, err)
	}
}

// TestLocalHostname pins the one fallback: v1.local_hostname, else the
// older v1.local-hostname, and a present local_hostname wins even when
// null.
func TestLocalHostname(t *testing.T) {
	tests := []struct {
		in, want, key, wantErr string
	}{
		{`{"v1": {"local_hostname": "web1", "local-hostname": "web1", "cloud_name": "nocloud"}, "ds": {}}`, "web1", "v1.local_hostname", ""},
		{`{"v1": {"local-hostname": "old-style"}}`, "old-style", "v1.local-hostname", ""},
		{`{"v1": {"local_hostname": null, "local-hostname": "x"}}`, "", "v1.local_hostname", ""},
		{`{"v1": {"cloud_name": "nocloud"}}`, "", "v1.local_hostname", ""},
		{`{"v1": {"local_hostname": "web1"`, "", "", "unexpected end of JSON input"},
		{``, "", "", "unexpected end of JSON input"},
		{`{"v1": "nope"}`, "", "", `"v1" is a string, want an object`},
		{`{"v1": {"local_hostname": ["web1"]}}`, "", "", `"v1.local_hostname" is an array, want a string`},
		{`{"v1": {"local_hostname": true}}`, "", "", `"v1.local_hostname" is a boolean, want a string`},
		{`{"v1": {"local-hostname": 7}}`, "", "", `"v1.local-hostname" is a number, want a string`},
		{`[]`, "", "", "top level is an array"},
		{"\x00\x01garbage", "", "", "invalid character"},
	}
	for _, tt := range tests {
		d, err := Parse([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || d.LocalHostname != tt.want || d.LocalHostnameKey != tt.key {
			t.Errorf("Parse(%q) = %+v, %v, want %q from %s", tt.in, d, err, tt.want, tt.key)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"ds": {"meta_data": {"local-hostname": "h"}}, "v1": {"instance_id": "i", "region": null}}`,
		`{"v1":{"local_hostname":"web1","local-hostname":"web1"}}`,
		`{"v1":{"local-hostname":"x"}}`, `{"v1":[]}`, `{"v1":{"local_hostname":5}}`, `{"v1":`, `{}`,
	} {
		f.Add([]byte(s))
	}
	ms, _ := filepath.Glob("../cloudinit/testdata/*/*/instance-data.json")
	for _, m := range ms {
		if b, err := os.ReadFile(m); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(b)
		if err != nil {
			if d != nil {
				t.Fatal("result with error")
			}
			return
		}
		if !utf8.ValidString(d.LocalHostname) {
			// Messages built from the name stay printable.
			t.Fatalf("invalid UTF-8 in name %q", d.LocalHostname)
		}
		if d.LocalHostname != "" && !d.HasV1 {
			t.Fatalf("a name without v1: %+v", d)
		}
	})
}

// TestReadersAgree: sealprep's Confined and guestcheck's Root read the
// same instance data from the same tree.
func TestReadersAgree(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "run/cloud-init"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Path), []byte(`{"v1": {"local-hostname": "vm1", "instance_id": "i-1"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, errA, perrA := Read(r)
	b, errB, perrB := Read(c)
	if errA != nil || errB != nil || perrA != nil || perrB != nil || *a != *b || a.LocalHostname != "vm1" {
		t.Errorf("Root %+v (%v), Confined %+v (%v)", a, errA, b, errB)
	}
}
