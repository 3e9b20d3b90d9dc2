package cloudcfg

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guestcheck/guestcheck/internal/fact/fs"
	"github.com/guestcheck/guestcheck/internal/parse/cloudconfig"
)

// tree writes files (guest path -> content; a value "->target" makes a
// symlink, "/" a directory) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case s == "/":
			err = os.MkdirAll(full, 0o755)
		case strings.HasPrefix(s, "->"):
			err = os.Symlink(s[2:], full)
		default:
			err = os.WriteFile(full, []byte(s), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func openBoth(t *testing.T, dir string) (*fs.Root, *fs.Confined) {
	t.Helper()
	r, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	c, err := fs.OpenConfined(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return r, c
}

func paths(s System) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

// TestRead pins which files cloud-init reads, in which order, and how
// they merge (util.read_conf_with_confd, read_conf_d).
func TestRead(t *testing.T) {
	dir := tree(t, map[string]string{
		"/etc/cloud/cloud.cfg":                "a: base\nb: base\nl: [base]\nd: {x: base, y: base}\ns: text\n",
		"/etc/cloud/cloud.cfg.d/90-last.cfg":  "a: ninety\nd: {x: ninety}\n",
		"/etc/cloud/cloud.cfg.d/10-first.cfg": "a: ten\nc: ten\nl: [ten]\ns: {k: ten}\n",
		"/etc/cloud/cloud.cfg.d/50-bad.cfg":   "a: [\n",
		"/etc/cloud/cloud.cfg.d/60-list.cfg":  "- not a mapping\n",
		"/etc/cloud/cloud.cfg.d/README":       "a: readme\n",
		"/etc/cloud/cloud.cfg.d/70-x.cfg.bak": "a: backup\n",
		"/etc/cloud/cloud.cfg.d/80-dir.cfg":   "/",
		"/etc/cloud/cloud.cfg.d/85-link.cfg":  "->/etc/cloud/extra.yaml",
		"/etc/cloud/cloud.cfg.d/86-gone.cfg":  "->/nowhere",
		"/etc/cloud/extra.yaml":               "e: linked\n",
	})
	r, c := openBoth(t, dir)
	for _, rd := range []Tree{r, c} {
		s := Read(rd)
		want := []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/10-first.cfg", "/etc/cloud/cloud.cfg.d/50-bad.cfg",
			"/etc/cloud/cloud.cfg.d/60-list.cfg", "/etc/cloud/cloud.cfg.d/85-link.cfg", "/etc/cloud/cloud.cfg.d/90-last.cfg"}
		if got := paths(s); !reflect.DeepEqual(got, want) {
			t.Errorf("%T files %q, want %q", rd, got, want)
		}
		wantMerged := map[string]any{
			"a": "ninety", "b": "base", "c": "ten", "e": "linked",
			"l": []any{"ten"},                               // a list is taken whole from the highest file
			"d": map[string]any{"x": "ninety", "y": "base"}, // mappings merge key by key
			"s": map[string]any{"k": "ten"},                 // a mapping replaces a lower string
		}
		if d := cmp.Diff(wantMerged, s.Merged); d != "" {
			t.Errorf("%T merged (-want +got):\n%s", rd, d)
		}
		for _, f := range s.Files {
			broken := strings.Contains(f.Path, "bad") || strings.Contains(f.Path, "list")
			if broken != (f.ParseErr != nil) || (f.Doc == nil) != broken {
				t.Errorf("%T %s: doc %v, parse error %v", rd, f.Path, f.Doc != nil, f.ParseErr)
			}
		}
		if s.Dir != "/etc/cloud/cloud.cfg.d" || s.DirErr != nil {
			t.Errorf("%T dir %q, %v", rd, s.Dir, s.DirErr)
		}
	}
}

// TestConfD: cloud.cfg's conf_d names the drop-in directory, and a false
// value turns drop-ins off.
func TestConfD(t *testing.T) {
	for _, tc := range []struct {
		base, wantDir, wantA string
		wantErr              bool
	}{
		{"a: base\n", "/etc/cloud/cloud.cfg.d", "default-d", false},
		{"a: base\nconf_d: ' /etc/cloud/other.d '\n", "/etc/cloud/other.d", "other-d", false},
		{"a: base\nconf_d: false\n", "", "base", false},
		{"a: base\nconf_d: ''\n", "", "base", false},
		{"a: base\nconf_d: [x]\n", "", "base", true},
		{"a: base\nconf_d: /etc/cloud/none.d\n", "/etc/cloud/none.d", "base", false},
	} {
		dir := tree(t, map[string]string{
			"/etc/cloud/cloud.cfg":             tc.base,
			"/etc/cloud/cloud.cfg.d/a.cfg":     "a: default-d\n",
			"/etc/cloud/other.d/a.cfg":         "a: other-d\n",
			"/etc/cloud/cloud.cfg.d/not-a.txt": "a: no\n",
		})
		r, _ := openBoth(t, dir)
		s := Read(r)
		if s.Dir != tc.wantDir || s.Merged["a"] != tc.wantA || (s.DirErr != nil) != tc.wantErr {
			t.Errorf("%q: dir %q, a=%v, err %v; want %q, %q, error %v", tc.base, s.Dir, s.Merged["a"], s.DirErr, tc.wantDir, tc.wantA, tc.wantErr)
		}
	}
}

// TestNoBase: without cloud.cfg the drop-ins still apply, and nothing at
// all is an empty configuration.
func TestNoBase(t *testing.T) {
	r, _ := openBoth(t, tree(t, map[string]string{"/etc/cloud/cloud.cfg.d/a.cfg": "a: d\n"}))
	s := Read(r)
	if _, ok := s.Base(); ok || len(s.DropIns()) != 1 || s.Merged["a"] != "d" {
		t.Errorf("no cloud.cfg: %+v", s)
	}
	r, _ = openBoth(t, t.TempDir())
	if s := Read(r); len(s.Files) != 0 || len(s.Merged) != 0 || s.DirErr != nil {
		t.Errorf("empty root: %+v", s)
	}
}

// TestReadersAgree: sealprep's Confined and guestcheck's Root give the
// same system configuration for the same tree.
func TestReadersAgree(t *testing.T) {
	dir := tree(t, map[string]string{
		"/etc/cloud/cloud.cfg":          "preserve_hostname: false\nnetwork: {config: disabled}\n",
		"/etc/cloud/cloud.cfg.d/90.cfg": "preserve_hostname: yes\n",
		"/etc/cloud/cloud.cfg.d/91.cfg": "a: [\n",
	})
	r, c := openBoth(t, dir)
	a, b := Read(r), Read(c)
	if !reflect.DeepEqual(paths(a), paths(b)) || !cmp.Equal(a.Merged, b.Merged) || a.Merged["preserve_hostname"] != true {
		t.Errorf("Root %q %v, Confined %q %v", paths(a), a.Merged, paths(b), b.Merged)
	}
}

// TestLoadPure: Load parses what it is given, once, without a tree.
func TestLoadPure(t *testing.T) {
	s := Load(System{Files: []File{
		{Path: cloudconfig.SystemPath, Data: []byte("a: 1\nb: 1\n")},
		{Path: "/etc/cloud/cloud.cfg.d/x.cfg", Data: []byte("a: 2\n")},
		{Path: "/etc/cloud/cloud.cfg.d/y.cfg", ReadErr: os.ErrPermission},
	}})
	if s.Merged["a"] != int64(2) || s.Merged["b"] != int64(1) || s.Files[2].Doc != nil {
		t.Errorf("Load = %+v", s)
	}
	if !IsTemplate([]byte("## template: jinja\nhostname: x\n")) || IsTemplate([]byte("#cloud-config\n")) {
		t.Error("IsTemplate")
	}
}

func FuzzLoad(f *testing.F) {
	f.Add("network: {config: disabled}\nl: [a]\n", "network: {version: 2}\nl: {b: 1}\n")
	f.Add("a: [\n", "- x\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		s := Load(System{Files: []File{{Path: cloudconfig.SystemPath, Data: []byte(a)}, {Path: "/etc/cloud/cloud.cfg.d/b.cfg", Data: []byte(b)}}})
		for _, fl := range s.Files {
			if (fl.Doc == nil) == (fl.ParseErr == nil) {
				t.Fatalf("%s: doc and error %v", fl.Path, fl.ParseErr)
			}
		}
		// The drop-in wins every key it sets that is not a mapping.
		if d := s.Files[1].Doc; d != nil {
			for k, v := range d.Value {
				if _, isMap := v.(map[string]any); !isMap && !cmp.Equal(s.Merged[k], v, cmp.Comparer(func(x, y float64) bool { return x == y || x != x && y != y })) {
					t.Fatalf("key %q: merged %v, drop-in %v", k, s.Merged[k], v)
				}
			}
		}
	})
}
