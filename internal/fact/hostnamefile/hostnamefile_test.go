package hostnamefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
)

func TestParse(t *testing.T) {
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
		got, err := Parse([]byte(tt.in))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestDecide(t *testing.T) {
	denied := &os.PathError{Op: "open", Path: Path, Err: os.ErrPermission}
	for _, tc := range []struct {
		b    string
		err  error
		want State
		name string
	}{
		{"vm1\n", nil, Set, "vm1"},
		{"# c\n", nil, Empty, ""},
		{"", os.ErrNotExist, Missing, ""},
		{"", denied, Unusable, ""},
		{"a b\n", nil, Unusable, ""},
		{"a\nb\n", nil, Unusable, ""},
	} {
		s := Decide([]byte(tc.b), tc.err)
		if s.State != tc.want || s.Name != tc.name {
			t.Errorf("Decide(%q, %v) = %+v", tc.b, tc.err, s)
		}
		if (s.State == Unusable) != (s.ReadErr != nil || s.ParseErr != nil) {
			t.Errorf("Decide(%q, %v): unusable without a reason: %+v", tc.b, tc.err, s)
		}
	}
	if s := Decide([]byte("  vm2\nvm3\n"), nil); s.First != "vm2" || s.Name != "" {
		t.Errorf("several names: %+v, want First vm2 and no Name", s)
	}
	if s := Decide(nil, denied); !errors.Is(s.ReadErr, os.ErrPermission) {
		t.Errorf("read error lost: %+v", s)
	}
}

var lineRE = regexp.MustCompile(`line (\d+)`)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"web1\n", "# c\nweb1", "a b\n", "a\nb\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		name, err := Parse(b)
		if err != nil {
			m := lineRE.FindAllStringSubmatch(err.Error(), -1)
			ln := 0
			if m != nil {
				ln, _ = strconv.Atoi(m[len(m)-1][1])
			}
			if ln < 1 || ln > bytes.Count(b, []byte("\n"))+1 {
				t.Fatalf("error %q names no line of the input", err)
			}
			return
		}
		if strings.ContainsAny(name, " \t\n") {
			t.Fatalf("name %q contains whitespace", name)
		}
		// What hostnamectl writes back reads as the same name.
		if name != "" && !strings.HasPrefix(name, "#") {
			if back, err := Parse([]byte(name + "\n")); err != nil || back != name {
				t.Fatalf("%q written back reads %q, %v", name, back, err)
			}
		}
	})
}

// TestReadersAgree: sealprep's Confined and guestcheck's Root read the
// same static and kernel names from the same tree.
func TestReadersAgree(t *testing.T) {
	dir := t.TempDir()
	for p, s := range map[string]string{Path: "# template\nvm1\n", KernelPath: "vm1-live\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
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
	a, b := ReadStatic(r), ReadStatic(c)
	if a != b || a.Name != "vm1" {
		t.Errorf("static: Root %+v, Confined %+v", a, b)
	}
	ka, errA := ReadKernel(r)
	kb, errB := ReadKernel(c)
	if errA != nil || errB != nil || ka != kb || ka != "vm1-live" {
		t.Errorf("kernel: Root %q (%v), Confined %q (%v)", ka, errA, kb, errB)
	}
}

// TestReadStaticFallback: SUSE's /etc/HOSTNAME names the host where there
// is no /etc/hostname, and only then; a link to /etc/hostname is it.
func TestReadStaticFallback(t *testing.T) {
	for _, tc := range []struct {
		files      map[string]string
		name, file string
		state      State
	}{
		{map[string]string{"etc/HOSTNAME": "suse1\n"}, "suse1", "/etc/HOSTNAME", Set},
		{map[string]string{"etc/HOSTNAME": "\n"}, "", "/etc/HOSTNAME", Empty},
		{map[string]string{"etc/hostname": "web1\n", "etc/HOSTNAME": "suse1\n"}, "web1", "/etc/hostname", Set},
		{map[string]string{"etc/hostname": "", "etc/HOSTNAME": "suse1\n"}, "", "/etc/hostname", Empty},
		{map[string]string{}, "", "/etc/hostname", Missing},
	} {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		for p, c := range tc.files {
			if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s := ReadStatic(r)
		if s.Name != tc.name || s.File() != tc.file || s.State != tc.state {
			t.Errorf("%v: %q from %s (%s), want %q from %s (%s)", tc.files, s.Name, s.File(), s.State, tc.name, tc.file, tc.state)
		}
	}
}
