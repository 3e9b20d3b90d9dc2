package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusalLinesFit: every refusal in the conversation goldens (the
// operations', preflight's, the image's and the confirmation's), as the
// text report shows it, fits 160 columns, its fix on a line of its own.
func TestRefusalLinesFit(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.golden"))
	n := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		in := false
		for i, l := range strings.Split(string(b), "\n") {
			_, l, _ = strings.Cut(l, "|") // "stdout|" or "stderr|"
			switch {
			case strings.HasPrefix(strings.TrimSpace(l), "Refused ("):
				in = true
			case strings.TrimSpace(l) == "":
				in = false
			case in:
				n++
				if w := len([]rune(l)); w > 160 {
					t.Errorf("%s:%d: a refusal of %d columns:\n%s", file, i+1, w, l)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no refusal found in the goldens: the scan is broken")
	}
}
