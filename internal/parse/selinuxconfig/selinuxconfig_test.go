package selinuxconfig

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in         string
		mode, typ  string
		mline, tln int
	}{
		{"# SELINUX=disabled\nSELINUX=Enforcing\nSELINUXTYPE=targeted\n", "enforcing", "targeted", 2, 3},
		// Only a line starting with SELINUX= counts; the first wins.
		{" SELINUX=disabled\nSELINUX=permissive\nSELINUX=enforcing\n", "permissive", "", 2, 0},
		// A value that is none of the three is passed over.
		{"SELINUX=bogus\nSELINUX=  disabledXYZ\n", "disabled", "", 2, 0},
		// SELINUXTYPE= may be indented, in any case; the last wins; quotes stay.
		{"  selinuxtype=mls\nSELINUXTYPE=\"targeted\" \r\n", "", "\"targeted\"", 0, 2},
		{"#SELINUXTYPE=x\n", "", "", 0, 0},
	} {
		got := Parse([]byte(c.in))
		if got.Mode != c.mode || got.Type != c.typ || got.ModeLine != c.mline || got.TypeLine != c.tln {
			t.Errorf("Parse(%q) = %+v, want %q@%d %q@%d", c.in, got, c.mode, c.mline, c.typ, c.tln)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("# SELINUX=disabled\nSELINUX=Enforcing\nSELINUXTYPE=\"targeted\"\n")
	f.Add(" SELINUX = 'permissive' \r\nSELINUXTYPE=mls")
	f.Fuzz(func(t *testing.T, s string) {
		c := Parse([]byte(s))
		n := strings.Count(s, "\n") + 1
		switch c.Mode {
		case "", "enforcing", "permissive", "disabled":
		default:
			t.Fatalf("mode %q", c.Mode)
		}
		if c.ModeLine > n || c.TypeLine > n || (c.Mode == "") != (c.ModeLine == 0) || (c.TypeLine == 0 && c.Type != "") {
			t.Fatalf("lines %+v outside the %d-line input", c, n)
		}
		if strings.Contains(c.Type, "\n") {
			t.Fatalf("type %q spans lines", c.Type)
		}
		// Comments change nothing; a later SELINUX= line does not win over
		// an earlier one, a later SELINUXTYPE= does.
		if d := Parse([]byte(s + "\n# SELINUX=disabled\n#SELINUXTYPE=x\n")); d.Mode != c.Mode || d.Type != c.Type {
			t.Fatalf("a comment changed %+v to %+v", c, d)
		}
		d := Parse([]byte(s + "\nSELINUX=permissive\nSELINUXTYPE=mls\n"))
		if (c.Mode != "" && d.Mode != c.Mode) || (c.Mode == "" && d.Mode != "permissive") || d.Type != "mls" {
			t.Fatalf("appending gave %+v from %+v", d, c)
		}
	})
}
