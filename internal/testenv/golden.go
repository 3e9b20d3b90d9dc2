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

// GeneratedBlock holds the block of the file at path between the lines
// "<!-- NAME:begin ..." and "<!-- NAME:end -->" to want, or rewrites it
// when update is set: tables in the README that are generated from the
// code (options, operations, codes) stay what the code says.
func GeneratedBlock(t testing.TB, path, name, want string, update bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	begin := strings.Index(s, "<!-- "+name+":begin")
	end := strings.Index(s, "<!-- "+name+":end -->")
	if begin < 0 || end < begin {
		t.Fatalf("%s: no <!-- %s:begin --> ... <!-- %s:end --> markers", path, name, name)
	}
	start := begin + strings.IndexByte(s[begin:], '\n') + 1
	if s[start:end] == want {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(s[:start]+want+s[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the %s block is not what the code generates (go test -run %s -update rewrites it):\n%s", path, name, t.Name(), LineDiff(want, s[start:end]))
}
