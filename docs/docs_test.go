package docs

import "testing"

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"Run `blkid` as **root**":             "Run blkid as root",
		"see [the page](checks/fstab.md) now": "see the page now",
		"—":                                   "",
		"a<br>b":                              "a b",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
