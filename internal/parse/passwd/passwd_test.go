package passwd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const passwdFile = `root:x:0:0:root:/root:/bin/bash
# comment
ops:x:1000:1000::/home/ops:/bin/bash
bad:x:1001
+nis
num:x:a:1::/:/bin/sh
`

const groupFile = `root:x:0:
sudo:x:27:debian,ops
ops:x:1000:
`

func TestParsePasswd(t *testing.T) {
	us, probs := ParsePasswd("/etc/passwd", []byte(passwdFile))
	want := []User{
		{Name: "root", UID: 0, GID: 0, Gecos: "root", Home: "/root", Shell: "/bin/bash", Line: 1},
		{Name: "ops", UID: 1000, GID: 1000, Home: "/home/ops", Shell: "/bin/bash", Line: 3},
	}
	if d := cmp.Diff(want, us); d != "" {
		t.Errorf("users (-want +got):\n%s", d)
	}
	if len(probs) != 2 || probs[0].Error() != "/etc/passwd:4: 3 fields, want 7" || probs[1].Line != 6 {
		t.Errorf("problems = %v", probs)
	}
}

func TestGroupsOf(t *testing.T) {
	us, _ := ParsePasswd("p", []byte(passwdFile))
	gs, probs := ParseGroup("g", []byte(groupFile))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	db := DB{Users: us, Groups: gs}
	u, _ := db.User("ops")
	if got := strings.Join(db.GroupsOf(u), ","); got != "ops,sudo" {
		t.Errorf("GroupsOf(ops) = %s", got)
	}
}

func TestShadow(t *testing.T) {
	ss, probs := ParseShadow("s", []byte("root:*:19000:0:99999:7:::\nops:!$6$x$y:19000:0:99999:7:::\ndev:$6$a$b:1:0:99999:7:::\nnone::1:0:99999:7:::\nshort:x\n"))
	if len(probs) != 1 || probs[0].Line != 5 {
		t.Errorf("problems = %v", probs)
	}
	for _, tc := range []struct {
		name           string
		locked, hasPwd bool
	}{{"root", true, false}, {"ops", true, false}, {"dev", false, true}, {"none", false, false}} {
		s, ok := DB{Shadow: ss}.ShadowOf(tc.name)
		if !ok || s.Locked() != tc.locked || s.HasPassword() != tc.hasPwd {
			t.Errorf("%s: ok=%v locked=%v has=%v", tc.name, ok, s.Locked(), s.HasPassword())
		}
		if strings.Contains(s.Describe(), "$") {
			t.Errorf("Describe leaks the hash: %s", s.Describe())
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(passwdFile)
	f.Add(groupFile)
	f.Add("a:b:c:d:e:f:g:h:i\n")
	f.Fuzz(func(t *testing.T, s string) {
		us, p1 := ParsePasswd("p", []byte(s))
		gs, p2 := ParseGroup("g", []byte(s))
		ss, p3 := ParseShadow("s", []byte(s))
		for _, u := range us {
			if u.Name == "" || u.Line < 1 {
				t.Fatalf("bad user %+v", u)
			}
		}
		for _, g := range gs {
			if g.Name == "" {
				t.Fatalf("bad group %+v", g)
			}
		}
		for _, p := range append(append(p1, p2...), p3...) {
			if strings.Contains(p.Error(), "\n") {
				t.Fatalf("multi-line problem %q", p.Error())
			}
		}
		_ = ss
	})
}
