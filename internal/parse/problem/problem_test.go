package problem

import "testing"

func TestString(t *testing.T) {
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{"/etc/fstab", 3, "bad"}, "/etc/fstab:3: bad"},
		{Problem{"/etc/fstab", 0, "bad"}, "/etc/fstab: bad"},
		{Problem{"", 7, "bad"}, "line 7: bad"},
		{Problem{"", 0, "bad"}, "bad"},
		{Problem{"f", 1, "two\nlines\t here "}, "f:1: two lines here"},
		{Problem{"", 2, "x"}.In("/etc/hosts"), "/etc/hosts:2: x"},
		{At("a", 4, "%d items", 2), "a:4: 2 items"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%#v: got %q, want %q", c.p, got, c.want)
		}
		if got := c.p.Error(); got != c.want {
			t.Errorf("Error() %q, want %q", got, c.want)
		}
	}
	if got := Join([]Problem{{"a", 1, "x"}, {"b", 0, "y"}}); got != "a:1: x\nb: y" {
		t.Errorf("Join: %q", got)
	}
}

func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "a b", " a\n\tb ", "a  b", "\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := OneLine(s)
		for _, r := range o {
			if r == '\n' || r == '\r' {
				t.Fatalf("OneLine(%q) = %q keeps a line break", s, o)
			}
		}
		if OneLine(o) != o {
			t.Fatalf("OneLine not idempotent on %q", s)
		}
	})
}
