package dpkgstatus

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// parseBefore is Parse as it was before it stopped splitting the file
// into a slice of lines and lowering every field name with an allocation;
// the tests hold the two equal.
func parseBefore(b []byte) ([]Package, []Problem) {
	var out []Package
	var probs []Problem
	var cur *Package
	var key string
	flush := func() {
		if cur != nil {
			if cur.Name == "" {
				probs = append(probs, at(cur.Line, "stanza without a Package field"))
			} else {
				out = append(out, *cur)
			}
		}
		cur, key = nil, ""
	}
	for i, raw := range strings.Split(string(b), "\n") {
		ln := i + 1
		raw = strings.TrimRight(raw, "\r")
		if strings.TrimSpace(raw) == "" {
			flush()
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			if key == "" {
				probs = append(probs, at(ln, "continuation line without a field"))
			}
			continue // continuation of a multi-line field (Description, Conffiles)
		}
		k, v, ok := strings.Cut(raw, ":")
		if !ok {
			probs = append(probs, at(ln, "line is not \"Field: value\""))
			continue
		}
		if cur == nil {
			cur = &Package{Line: ln}
		}
		key, v = strings.ToLower(k), strings.TrimSpace(v)
		switch key {
		case "package":
			cur.Name = v
		case "version":
			cur.Version = v
		case "architecture":
			cur.Arch = v
		case "status":
			f := strings.Fields(v)
			if len(f) != 3 {
				probs = append(probs, at(ln, "Status has not three words"))
				continue
			}
			cur.Want, cur.Flag, cur.State = f[0], f[1], f[2]
		case "provides":
			for _, p := range strings.Split(v, ",") {
				name, _, _ := strings.Cut(strings.TrimSpace(p), " ")
				if name != "" {
					cur.Provides = append(cur.Provides, name)
				}
			}
		}
	}
	flush()
	return out, probs
}

func sameAsBefore(t *testing.T, b []byte) {
	t.Helper()
	gp, gq := Parse(b)
	wp, wq := parseBefore(b)
	if !reflect.DeepEqual(gp, wp) || !reflect.DeepEqual(gq, wq) {
		t.Errorf("Parse(%q) =\n%+v %+v\nbefore:\n%+v %+v", b, gp, gq, wp, wq)
	}
}

func TestParseSameAsBefore(t *testing.T) {
	for _, s := range []string{"", "\n", "Package: a\n", "Package: a", "PACKAGE: a\nStatus: install ok installed\r\n\n\nPackage: b\n",
		" cont\n", ":x\n", "Package: a\n :\nx\n", "Pac\u212aage: kelvin\n\u017ftatus: a b c\n", "Provides: a (= 1), b\nPackage: p\n"} {
		sameAsBefore(t, []byte(s))
	}
	if b, err := os.ReadFile(Path); err == nil {
		sameAsBefore(t, b)
	}
}

func FuzzParseSameAsBefore(f *testing.F) {
	f.Add([]byte("Package: a\nStatus: install ok installed\nProvides: x, y (= 1)\n\nPackage: b\n"))
	f.Add([]byte("PACKAGE: \u212a\r\n \tdesc\n"))
	f.Fuzz(func(t *testing.T, b []byte) { sameAsBefore(t, b) })
}

func benchStatus(b *testing.B) []byte {
	var s strings.Builder
	for i := 0; i < 600; i++ {
		s.WriteString("Package: pkg" + strings.Repeat("x", i%7) + "\nStatus: install ok installed\nPriority: optional\nSection: libs\n" +
			"Installed-Size: 123\nMaintainer: A <a@example.com>\nArchitecture: amd64\nVersion: 1.2.3-4\nDepends: libc6 (>= 2.34)\n" +
			"Description: a package\n some words\n more words\n .\n the end\n\n")
	}
	return []byte(s.String())
}

func BenchmarkParse(b *testing.B) {
	data := benchStatus(b)
	for b.Loop() {
		Parse(data)
	}
}

func BenchmarkParseBefore(b *testing.B) {
	data := benchStatus(b)
	for b.Loop() {
		parseBefore(data)
	}
}
