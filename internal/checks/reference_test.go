package checks

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/reference.md's generated code index")

const (
	referencePath = "../../docs/reference.md"
	indexBegin    = "<!-- codes:begin"
	indexEnd      = "<!-- codes:end -->"
	indexHeader   = "| check | codes |\n|---|---|\n"
)

// codeIndex renders the reference's table of finding codes from the
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

// TestReferenceCodeIndex requires docs/reference.md's code index to be
// what the registry generates; -update rewrites it after a check gains a
// code.
func TestReferenceCodeIndex(t *testing.T) {
	ref, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	begin := bytes.Index(ref, []byte(indexBegin))
	end := bytes.Index(ref, []byte(indexEnd))
	if begin < 0 || end < begin {
		t.Fatalf("%s: no %q ... %q markers around the code index", referencePath, indexBegin, indexEnd)
	}
	start := begin + bytes.IndexByte(ref[begin:], '\n') + 1
	got, want := string(ref[start:end]), codeIndex()
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, ref[:start]...), want...), ref[end:]...)
		if err := os.WriteFile(referencePath, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's code index is stale: run `go test ./internal/checks -run TestReferenceCodeIndex -update`\ngot:\n%s\nwant:\n%s", referencePath, got, want)
}

// TestReferenceChecksTable holds docs/reference.md's table of checks to
// the registry: every check, once, in the order --list prints them.
func TestReferenceChecksTable(t *testing.T) {
	ref, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(ref), "\n## Checks\n")
	if !ok {
		t.Fatalf("%s has no ## Checks section", referencePath)
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
		t.Errorf("%s's checks table lists %v; --list has %v", referencePath, got, want)
	}
}
