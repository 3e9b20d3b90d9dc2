package cpulist

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string][]int{
		"0-3\n":        {0, 1, 2, 3},
		"0,2-3,8":      {0, 2, 3, 8},
		"\n":           nil,
		"5-5,1":        {1, 5},
		"0-1,1-2":      {0, 1, 2},
		"8191":         {8191},
		"3-4,0\n\n   ": {0, 3, 4},
	} {
		got, p := Parse("online", []byte(in))
		if p != nil || !slices.Equal(got, want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, p, want)
		}
		if Format(got) != Format(want) {
			t.Errorf("Format round trip of %q", in)
		}
	}
	for _, in := range []string{"a", "3-1", "0-", "-1", "8192", "0-99999999999", "1,,2", "0 1"} {
		if got, p := Parse("present", []byte(in)); p == nil || p.File != "present" {
			t.Errorf("Parse(%q) = %v, want a problem", in, got)
		}
	}
	if got := Format([]int{0, 1, 2, 4, 6, 7}); got != "0-2,4,6-7" {
		t.Errorf("Format = %q", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0-3", "0,2-3,8", "", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, p := Parse("f", b)
		if p != nil {
			return
		}
		again, p2 := Parse("f", []byte(Format(got)))
		if p2 != nil || !slices.Equal(got, again) {
			t.Fatalf("%q: %v does not round-trip: %v %v", b, got, again, p2)
		}
	})
}
