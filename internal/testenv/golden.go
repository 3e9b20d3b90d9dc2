package testenv

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Golden compares got with the file at path, line by line, or rewrites the
// file when update is set (each package's -update flag: a package-level
// flag here would clash with theirs). A message test holds whole lines
// this way, so that a change of wording is seen in review.
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it after a deliberate change):\n%s", path, LineDiff(string(want), got))
	}
}

// LineDiff lists the lines of want and got that differ, by number.
func LineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
