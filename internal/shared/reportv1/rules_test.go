package reportv1

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestMatchersArePatterns holds each hand-written matcher to its
// pattern's regular expression, on the strings that should match and
// on many random strings near them.
func TestMatchersArePatterns(t *testing.T) {
	samples := []string{"", "a", "a-b", "-a", "a-", "a--b", "A", "check0-finding1", strings.Repeat("a", 32), strings.Repeat("f", 31),
		"SHA256:" + strings.Repeat("A", 43), "SHA256:" + strings.Repeat("+", 42), "00", "00:1f", "00:1F", "0:00", "00:",
		"192.0.2.1/24", "fe80::1/64", "/24", "1/1234", "2026-12-07", "2026-1-07", "2026-12-07T10:00:00Z",
		"2026-12-07T10:00:00.123+01:00", "2026-12-07T10:00:00,5-02:00", "2026-12-07T10:00:00.Z", "2026-12-07t10:00:00z",
		"2026-12-07T10:00:00+0100", "2026-12-07T10:00Z", "é", "a\nb", "52:54:00:12:34:56", "52:54:00:12:34:5", "52:54:00:12:34:56:78", "clone-1", "clone-12", "clone-", "clone-1a"}
	const alphabet = "abcf09AFZ-:./+TzS,é\nlone"
	rng := rand.New(rand.NewPCG(1, 2))
	for name, text := range Patterns {
		re, m := regexp.MustCompile(text), matchers[name]
		if m == nil {
			t.Fatalf("pattern %s has no matcher", name)
		}
		try := func(s string) {
			if got, want := m(s), re.MatchString(s); got != want {
				t.Errorf("%s: matcher(%q) = %v, %s says %v", name, s, got, text, want)
			}
		}
		for _, s := range samples {
			try(s)
			// Each sample with one byte changed, dropped or added.
			for i := range len(s) {
				try(s[:i] + s[i+1:])
				try(s[:i] + string(alphabet[rng.IntN(len(alphabet))]) + s[i+1:])
				try(s[:i] + string(alphabet[rng.IntN(len(alphabet))]) + s[i:])
			}
		}
		for range 20000 {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			try(string(b))
		}
	}
}
