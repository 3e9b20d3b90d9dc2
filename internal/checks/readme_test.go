package checks

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite README.md's generated code index")

const (
	readmePath  = "../../README.md"
	indexBegin  = "<!-- codes:begin"
	indexEnd    = "<!-- codes:end -->"
	indexHeader = "| check | codes |\n|---|---|\n"
)

// codeIndex renders the README's table of finding codes from the
// registry, so that a code is written once, in its check's Codes.
func codeIndex() string {
	var b strings.Builder
	b.WriteString(indexHeader)
	for _, c := range All {
		b.WriteString("| `" + c.ID + "` |")
		for _, code := range c.Codes {
			b.WriteString(" `" + code + "`")
		}
		b.WriteString(" |\n")
	}
	return b.String()
}

// TestReadmeCodeIndex requires README.md's code index to be what the
// registry generates; -update rewrites it after a check gains a code.
func TestReadmeCodeIndex(t *testing.T) {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	begin := bytes.Index(readme, []byte(indexBegin))
	end := bytes.Index(readme, []byte(indexEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s: no %q ... %q markers around the code index", readmePath, indexBegin, indexEnd)
	}
	start := begin + bytes.IndexByte(readme[begin:], '\n') + 1
	got, want := string(readme[start:end]), codeIndex()
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, readme[:start]...), want...), readme[end:]...)
		if err := os.WriteFile(readmePath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's code index is stale: run `go test ./internal/checks -run TestReadmeCodeIndex -update`\ngot:\n%s\nwant:\n%s", readmePath, got, want)
}

// TestReadmeChecksTable holds the README's table of checks to the
// registry: every check, once, in the order --list prints them.
func TestReadmeChecksTable(t *testing.T) {
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Checks\n")
	if !ok {
		t.Fatalf("%s has no ## Checks section", readmePath)
	}
	after, _, _ = strings.Cut(after, "\n### ")
	var got []string
	for _, l := range strings.Split(after, "\n") {
		if id, ok := strings.CutPrefix(l, "| `"); ok {
			got = append(got, id[:strings.IndexByte(id, '`')])
		}
	}
	var want []string
	for _, c := range All {
		want = append(want, c.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("README's checks table lists %v; --list has %v", got, want)
	}
}
