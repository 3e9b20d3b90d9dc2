package config

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv"
)

const manPage = "../../../packaging/man/guestcheck.yaml.5"

// TestManPage: the committed guestcheck.yaml(5) is what Keys generates
// (go test -update rewrites it), groff renders it without a warning, and
// it names every key.
func TestManPage(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMan(&b); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, manPage, b.String())

	groff := testenv.Tool(t, "groff", "groff-base")
	cmd := exec.Command(groff, "-man", "-ww", "-Tutf8", "-rLL=100n")
	cmd.Stdin = bytes.NewReader(b.Bytes())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("groff -man -ww: %v\n%s", err, stderr.String())
	}
	// Strip overstriking (bold and underline) to read the text.
	text := string(out)
	for strings.Contains(text, "\b") {
		i := strings.Index(text, "\b")
		text = text[:i-1] + text[i+1:]
	}
	for _, k := range Keys {
		if !strings.HasSuffix(k.Path, "[]") && !strings.Contains(text, k.Path) {
			t.Errorf("guestcheck.yaml(5) lacks %s", k.Path)
		}
	}
	for _, w := range []string{"check-config", "waivers[].expires", "1h30m"} {
		if !strings.Contains(text, w) {
			t.Errorf("guestcheck.yaml(5) lacks %q", w)
		}
	}
}

// TestManExample: the page's example is a valid file.
func TestManExample(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(manExample, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	c, err := Parse("example.yaml", []byte(strings.Join(lines, "\n")))
	if err != nil || len(c.Waivers) != 1 || c.Waivers[0].ExpiresText() != "2027-03-01" || c.CheckEnabled("dns") {
		t.Errorf("the example of guestcheck.yaml(5): %+v, %v", c, err)
	}
}

// TestKeysDescribed: every key has help, every leaf a type, and the
// table agrees with the decoder on what a section holds.
func TestKeysDescribed(t *testing.T) {
	for _, k := range Keys {
		if k.Help == "" {
			t.Errorf("%s has no help", k.Path)
		}
		leaf := k.decode != nil
		if parent, _ := splitPath(k.Path); strings.HasSuffix(parent, "[]") || k.Path == "waivers" {
			continue
		}
		if leaf != (k.Type != "") {
			t.Errorf("%s: type %q, but decode set is %v", k.Path, k.Type, leaf)
		}
	}
}
