package sshdconfig

import (
	iofs "io/fs"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mapSource serves files from a map, as the guest filesystem would.
type mapSource map[string]string

func (m mapSource) ReadFile(name string) ([]byte, error) {
	s, ok := m[name]
	if !ok {
		return nil, iofs.ErrNotExist
	}
	return []byte(s), nil
}

func (m mapSource) Glob(pattern string) ([]string, error) {
	var out []string
	for k := range m {
		if ok, err := path.Match(pattern, k); err != nil {
			return nil, err
		} else if ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}

func TestParseLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []Line
		probs    []string
	}{
		{"space", "PasswordAuthentication no\n", []Line{{"PasswordAuthentication", []string{"no"}, 1}}, nil},
		{"equals", "PermitRootLogin=no\n", []Line{{"PermitRootLogin", []string{"no"}, 1}}, nil},
		{"spaced equals", "  Port = 2222\n", []Line{{"Port", []string{"2222"}, 1}}, nil},
		{"comment and blank", "# a comment\n\n   \t\n#Port 22\n", nil, nil},
		{"trailing comment", "Port 22 # the default\n", []Line{{"Port", []string{"22"}, 1}}, nil},
		{"quoted", `Banner "/etc/issue net"` + "\n", []Line{{"Banner", []string{"/etc/issue net"}, 1}}, nil},
		{"single quoted hash", "AuthorizedKeysCommand '/bin/x #1'\n", []Line{{"AuthorizedKeysCommand", []string{"/bin/x #1"}, 1}}, nil},
		{"escaped space", `ChrootDirectory /srv/a\ b` + "\n", []Line{{"ChrootDirectory", []string{"/srv/a b"}, 1}}, nil},
		{"crlf", "UsePAM yes\r\n", []Line{{"UsePAM", []string{"yes"}, 1}}, nil},
		{"several args", "HostKeyAlgorithms a,b c\n", []Line{{"HostKeyAlgorithms", []string{"a,b", "c"}, 1}}, nil},
		{"no argument", "PasswordAuthentication\nPort 22\n", []Line{{"Port", []string{"22"}, 2}}, []string{`f:1: no argument after keyword "PasswordAuthentication"`}},
		{"bad quotes", "Banner \"x\n", nil, []string{"f:1: invalid quotes"}},
		{"binary", "Port \x0022\n", nil, []string{"f:1: line is not text"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := Parse("f", []byte(tc.in))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) lines (-want +got):\n%s", tc.in, diff)
			}
			var ps []string
			for _, p := range probs {
				ps = append(ps, p.String())
			}
			if diff := cmp.Diff(tc.probs, ps); diff != "" {
				t.Errorf("Parse(%q) problems (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// debianLike is Debian 12's layout: the main file includes the drop-ins
// first, so a drop-in beats the main file's own settings.
var debianLike = mapSource{
	"/etc/ssh/sshd_config": "Include /etc/ssh/sshd_config.d/*.conf\n" +
		"KbdInteractiveAuthentication no\nUsePAM yes\nPasswordAuthentication no\n" +
		"Match User backup\n  PasswordAuthentication yes\n  PermitRootLogin yes\n" +
		"Match Address 192.0.2.0/24\n  PasswordAuthentication no\n  PasswordAuthentication yes\n",
	"/etc/ssh/sshd_config.d/50-cloud-init.conf":        "PasswordAuthentication yes\n",
	"/etc/ssh/sshd_config.d/60-cloudimg-settings.conf": "PasswordAuthentication no\n",
	"/etc/ssh/sshd_config.d/README":                    "PasswordAuthentication maybe\n",
}

func TestFirstValueWinsAcrossIncludes(t *testing.T) {
	t.Parallel()
	c := Load(DefaultPath, debianLike)
	if len(c.Problems) > 0 {
		t.Fatalf("problems: %v", c.Problems)
	}
	d, ok := c.First("passwordauthentication")
	if !ok || d.Value() != "yes" || d.At() != "/etc/ssh/sshd_config.d/50-cloud-init.conf:1" {
		t.Errorf("First(PasswordAuthentication) = %+v, %v; want yes from 50-cloud-init.conf:1", d, ok)
	}
	wantFiles := []string{"/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/50-cloud-init.conf", "/etc/ssh/sshd_config.d/60-cloudimg-settings.conf"}
	if diff := cmp.Diff(wantFiles, c.Files); diff != "" {
		t.Errorf("Files (-want +got):\n%s", diff)
	}
	cond := c.Conditional("PasswordAuthentication")
	var got []string
	for _, d := range cond {
		got = append(got, d.Match.Criteria+"="+d.Value()+"@"+d.At())
	}
	want := []string{"User backup=yes@/etc/ssh/sshd_config:6", "Address 192.0.2.0/24=no@/etc/ssh/sshd_config:9"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Conditional (-want +got):\n%s", diff)
	}
	if _, ok := c.First("PermitRootLogin"); ok {
		t.Error("PermitRootLogin inside Match leaked into the global settings")
	}
	if n := len(c.MatchBlocks()); n != 2 {
		t.Errorf("MatchBlocks = %d, want 2", n)
	}
}

func TestIncludeScopes(t *testing.T) {
	t.Parallel()
	src := mapSource{
		"/etc/ssh/sshd_config": "Include extra.conf\nPermitRootLogin no\nMatch Group admins\n Include /etc/ssh/m.conf\n",
		// A Match inside an included file ends with that file.
		"/etc/ssh/extra.conf": "Match User x\nPermitRootLogin yes\n",
		"/etc/ssh/m.conf":     "PubkeyAuthentication no\n",
	}
	c := Load(DefaultPath, src)
	d, ok := c.First("PermitRootLogin")
	if !ok || d.Value() != "no" {
		t.Errorf("PermitRootLogin = %+v, %v; want the main file's no (the include's Match must not leak)", d, ok)
	}
	cond := c.Conditional("PubkeyAuthentication")
	if len(cond) != 1 || cond[0].Match.Criteria != "Group admins" || cond[0].File != "/etc/ssh/m.conf" {
		t.Errorf("Include inside Match: %+v", cond)
	}
	if _, ok := c.First("PubkeyAuthentication"); ok {
		t.Error("an Include inside a Match block applied globally")
	}
}

func TestAccumulatingKeywords(t *testing.T) {
	t.Parallel()
	c := Load(DefaultPath, mapSource{DefaultPath: "HostKey /etc/ssh/a\nhostkey /etc/ssh/b\nPort 22\nPort 2222\n"})
	var keys []string
	for _, d := range c.All("HostKey") {
		keys = append(keys, d.Value())
	}
	if diff := cmp.Diff([]string{"/etc/ssh/a", "/etc/ssh/b"}, keys); diff != "" {
		t.Errorf("HostKey (-want +got):\n%s", diff)
	}
	if n := len(c.All("port")); n != 2 {
		t.Errorf("Port entries = %d, want 2", n)
	}
}

func TestLoadProblems(t *testing.T) {
	t.Parallel()
	c := Load(DefaultPath, mapSource{})
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].String(), "sshd_config") {
		t.Errorf("missing main file: %v", c.Problems)
	}
	// A self-include must stop at sshd's depth limit, not loop.
	c = Load(DefaultPath, mapSource{DefaultPath: "Include sshd_config\nPort 22\n"})
	found := false
	for _, p := range c.Problems {
		found = found || strings.Contains(p.Msg, "nested too deep")
	}
	if !found {
		t.Errorf("self-include: problems %v, want a depth error", c.Problems)
	}
	// An Include whose glob matches nothing is fine, as in sshd.
	c = Load(DefaultPath, mapSource{DefaultPath: "Include /etc/ssh/sshd_config.d/*.conf\n"})
	if len(c.Problems) != 0 {
		t.Errorf("empty glob: %v", c.Problems)
	}
}

// deniedSource refuses one file as a non-root user is refused 0600 files.
type deniedSource struct{ mapSource }

func (d deniedSource) ReadFile(name string) ([]byte, error) {
	if strings.HasSuffix(name, "secret.conf") {
		return nil, &iofs.PathError{Op: "open", Path: name, Err: iofs.ErrPermission}
	}
	return d.mapSource.ReadFile(name)
}

func TestUnreadable(t *testing.T) {
	t.Parallel()
	src := deniedSource{mapSource{DefaultPath: "Include /etc/ssh/sshd_config.d/*.conf\n", "/etc/ssh/sshd_config.d/secret.conf": "Port 1\n"}}
	c := Load(DefaultPath, src)
	if p := c.Unreadable(); p == nil || p.Line != 1 || !strings.Contains(p.Msg, "secret.conf") {
		t.Errorf("Unreadable() = %+v", p)
	}
	if len(c.Problems) != 0 {
		t.Errorf("a file this process may not read is not a broken configuration: Problems = %v", c.Problems)
	}
	if p := Load(DefaultPath, debianLike).Unreadable(); p != nil {
		t.Errorf("readable config: Unreadable() = %+v", p)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range debianLike {
		f.Add(s)
	}
	f.Add("Banner \"a b\" # c\nMatch all\nPort=1\n")
	f.Add("X '\\'\n")
	f.Fuzz(func(t *testing.T, s string) {
		lines, probs := Parse("f", []byte(s))
		for _, l := range lines {
			if l.Keyword == "" || len(l.Args) == 0 || l.Line < 1 {
				t.Fatalf("bad line %+v from %q", l, s)
			}
		}
		for _, p := range probs {
			if strings.Contains(p.String(), "\n") {
				t.Fatalf("multi-line problem %q", p)
			}
		}
		c := Load(DefaultPath, mapSource{DefaultPath: s, "/etc/ssh/x": s})
		_ = c.Conditional("PasswordAuthentication")
	})
}
