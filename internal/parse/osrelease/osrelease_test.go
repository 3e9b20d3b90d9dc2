package osrelease

import (
	"errors"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/parse/problem"
)

func TestParse(t *testing.T) {
	t.Parallel()
	const debian = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
ID=debian
HOME_URL="https://www.debian.org/"
`
	const rocky = `NAME="Rocky Linux"
ID="rocky"
ID_LIKE="rhel centos fedora"
# comment
  
VERSION_ID='9.4'
`
	r, err := Parse([]byte(debian))
	if err != nil || r.ID() != "debian" || r["VERSION_ID"] != "12" || r["PRETTY_NAME"] != "Debian GNU/Linux 12 (bookworm)" || r.Like("rhel") {
		t.Errorf("debian: %v %v", r, err)
	}
	r, err = Parse([]byte(rocky))
	if err != nil || r.ID() != "rocky" || !r.Like("rhel") || !r.Like("rocky") || r["VERSION_ID"] != "9.4" {
		t.Errorf("rocky: %v %v", r, err)
	}
	for _, tc := range []struct {
		in, key, want string
		line          int // 0: no error
	}{
		{`X="a \"b\" \$c \\ \` + "`" + `"`, "X", "a \"b\" $c \\ `", 0},
		{`X="a \n"`, "X", `a \n`, 0}, // other backslashes stay
		{"X=", "X", "", 0},
		{"X=a b", "X", "", 1},
		{"X=\"open", "X", "", 1},
		{"X='it''s'", "X", "", 1},
		{"X=\"a\"b", "X", "", 1},
		{"X=\"$HOME\"", "X", "", 1},
		{"ok=1\n9X=2", "ok", "1", 2},
		{"just words", "", "", 1},
	} {
		r, err := Parse([]byte(tc.in))
		var e *problem.Problem
		switch {
		case tc.line == 0 && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.line != 0 && (!errors.As(err, &e) || e.Line != tc.line):
			t.Errorf("%q: error %v, want one on line %d", tc.in, err, tc.line)
		}
		if tc.key != "" && r[tc.key] != tc.want {
			t.Errorf("%q: %s = %q, want %q", tc.in, tc.key, r[tc.key], tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("ID=debian\nVERSION_ID=\"12\"\n"))
	f.Add([]byte("ID_LIKE='rhel fedora'\n#x\nBAD LINE\n"))
	f.Add([]byte("X=\"a\\\"b\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Parse(b)
		var e *problem.Problem
		if err != nil && (!errors.As(err, &e) || e.Line < 1 || e.Line > strings.Count(string(b), "\n")+1) {
			t.Fatalf("error %v has no line within the input", err)
		}
		for k, v := range r {
			if !validKey(k) || strings.ContainsRune(v, '\n') {
				t.Fatalf("bad assignment %q=%q", k, v)
			}
		}
	})
}
