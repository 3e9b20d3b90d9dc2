package netval

import (
	"strings"
	"testing"
)

func TestHelpers(t *testing.T) {
	t.Parallel()
	if s := (Problem{File: "f", Line: 3, Msg: "bad"}).String(); s != "f:3: bad" {
		t.Errorf("String() = %q", s)
	}
	if s := (Problem{File: "f", Msg: "bad"}).String(); s != "f: bad" {
		t.Errorf("String() without a line = %q", s)
	}
	if Loc("f", 2) != "f:2" {
		t.Error("Loc")
	}
	long := strings.Repeat("x", 70)
	if q := Quote(long); len(q) != 65 || q[len(q)-4:] != `..."` {
		t.Errorf("Quote cut = %q", q)
	}
	for l, want := range map[string]string{"ok": "", "a\x00": "contains a NUL byte", "\xff": "is not valid UTF-8"} {
		if got := BinaryLine(l); got != want {
			t.Errorf("BinaryLine(%q) = %q, want %q", l, got, want)
		}
	}
}
