package sudoers

import (
	iofs "io/fs"
	"path"
	"sort"
	"strings"
	"testing"
)

type mapSource map[string]string

func (m mapSource) ReadFile(name string) ([]byte, error) {
	s, ok := m[name]
	if !ok {
		return nil, iofs.ErrNotExist
	}
	return []byte(s), nil
}

func (m mapSource) ReadDirNames(dir string) ([]string, error) {
	var out []string
	for k := range m {
		if path.Dir(k) == dir {
			out = append(out, path.Base(k))
		}
	}
	if len(out) == 0 {
		return nil, iofs.ErrNotExist
	}
	sort.Strings(out)
	return out, nil
}

const debianSudoers = `Defaults	env_reset
# User privilege specification
root	ALL=(ALL:ALL) ALL
%sudo	ALL=(ALL:ALL) ALL
@includedir /etc/sudoers.d
`

func TestLoad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files mapSource
		reads bool
		found bool
	}{
		{"at includedir", mapSource{"/etc/sudoers": debianSudoers,
			"/etc/sudoers.d/90-cloud-init-users": "# Created by cloud-init\n\n# User rules for ops\nops ALL=(ALL) NOPASSWD:ALL\n"}, true, true},
		{"hash includedir", mapSource{"/etc/sudoers": "#includedir /etc/sudoers.d\n",
			"/etc/sudoers.d/90-cloud-init-users": "ops   ALL=(ALL)  NOPASSWD:ALL # trailing\n"}, true, true},
		{"no include", mapSource{"/etc/sudoers": "root ALL=(ALL) ALL\n# includedir /etc/sudoers.d\n",
			"/etc/sudoers.d/90-cloud-init-users": "ops ALL=(ALL) NOPASSWD:ALL\n"}, false, false},
		{"dotted name skipped", mapSource{"/etc/sudoers": "@includedir /etc/sudoers.d\n",
			"/etc/sudoers.d/90-cloud-init-users.bak": "ops ALL=(ALL) NOPASSWD:ALL\n"}, false, false},
		{"continuation", mapSource{"/etc/sudoers": "@include sudoers.d/90-cloud-init-users\n",
			"/etc/sudoers.d/90-cloud-init-users": "ops ALL=(ALL) \\\n NOPASSWD:ALL\n"}, true, true},
		{"other rule", mapSource{"/etc/sudoers": debianSudoers,
			"/etc/sudoers.d/90-cloud-init-users": "ops ALL=(ALL) ALL\n"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Load(DefaultPath, tc.files)
			f := "/etc/sudoers.d/90-cloud-init-users"
			if c.Reads(f) != tc.reads {
				t.Errorf("Reads = %v, files %v", c.Reads(f), c.Files)
			}
			if _, ok := c.FindRule(f, "ops", "ALL=(ALL) NOPASSWD:ALL"); ok != tc.found {
				t.Errorf("FindRule = %v, lines %+v", ok, c.Lines)
			}
		})
	}
}

func TestUIDNotComment(t *testing.T) {
	ls, _ := Parse("f", []byte("#1000 ALL=(ALL) ALL # c\n"))
	if len(ls) != 1 || ls[0].Text != "#1000 ALL=(ALL) ALL" {
		t.Errorf("got %+v", ls)
	}
}

func TestLoop(t *testing.T) {
	c := Load("/a", mapSource{"/a": "#include /a\n"})
	if len(c.Problems) == 0 || !strings.Contains(c.Problems[0], "too deep") {
		t.Errorf("problems = %v", c.Problems)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(debianSudoers)
	f.Add("a \\\n b #c\n#include x\n")
	f.Fuzz(func(t *testing.T, s string) {
		ls, incs := Parse("/etc/sudoers", []byte(s))
		for _, l := range ls {
			if l.Line < 1 || strings.TrimSpace(l.Text) != l.Text || l.Text == "" {
				t.Fatalf("bad line %+v", l)
			}
		}
		for _, i := range incs {
			if !strings.HasPrefix(i.Target, "/") {
				t.Fatalf("relative target %q", i.Target)
			}
		}
	})
}
