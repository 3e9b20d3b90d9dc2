package clean

import "testing"

// TestCleanText: what is kept, what becomes a space and what U+FFFD.
func TestCleanText(t *testing.T) {
	for in, want := range map[string]string{
		"web-1 ünïcode 名前":            "web-1 ünïcode 名前",
		"a\nb\r\nc\td":                "a b  c d",
		"\x1b[31mred":                 "\uFFFD[31mred",
		"\u009b31m \u0085":            "\uFFFD31m  ",
		"\u202eevil\u202c \u2067x":    "\uFFFDevil\uFFFD \uFFFDx",
		"bad\xffutf8":                 "bad\uFFFDutf8",
		"line\u2028sep\u2029par\x00n": "line sep par\uFFFDn",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
		if got := Text(in); !IsClean(got) {
			t.Errorf("Text(%q) = %q, which is not clean", in, got)
		}
	}
}
