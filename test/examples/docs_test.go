package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines bounds the README: a guide to what the tools are for,
// installing them, the two commands and the ways to run them, pointing at
// docs/ for the reference, the figures and the tests.
const readmeMaxLines = 500

// TestReadmeIsAGuide: the README stays at most readmeMaxLines lines, and
// its first example is the two commands that work on a fresh machine.
func TestReadmeIsAGuide(t *testing.T) {
	text := readFile(t, "README.md")
	if n := strings.Count(text, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference, figures or test notes to docs/ (docs/reference.md, docs/testing.md)", n, readmeMaxLines)
	}
	blocks := Blocks("README.md", text)
	if len(blocks) == 0 {
		t.Fatal("README.md has no code block")
	}
	lines := nonEmpty(blocks[0].Text)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "make run ") || !strings.HasPrefix(lines[1], "make test ") {
		t.Errorf("%s: the README's first block is %q; it must be `make run` then `make test`, the two commands that work on a fresh machine", blocks[0].Where, lines)
	}
}

// mdLink is a Markdown link or image: its target, up to a space (a title)
// or the closing parenthesis.
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// codeSpan is inline code, whose text is not a link.
var codeSpan = regexp.MustCompile("`+[^`]*`+")

// heading is an ATX heading.
var heading = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.*?)[ \t#]*$`)

// anchors are the fragment IDs GitHub gives the headings of a Markdown
// text: lower case, markup and punctuation dropped, spaces as hyphens,
// and a repeated one suffixed -1, -2...
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(Prose(text), -1) {
		h := mdLink.ReplaceAllStringFunc(m[1], func(l string) string { return l[strings.Index(l, "[")+1 : strings.Index(l, "](")] })
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		id := b.String()
		for i, base := 1, id; out[id]; i++ {
			id = base + "-" + strconv.Itoa(i)
		}
		out[id] = true
	}
	return out
}

// linkedDocs are the Markdown files whose relative links are held to the
// tree: the README and the pages of docs/.
func linkedDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, p := range pages {
		rel, _ := filepath.Rel(repo, p)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// TestRelativeLinks: every relative link of README.md and docs/*.md
// names a file or directory that exists, and a #fragment names a heading
// of the page it points at.
func TestRelativeLinks(t *testing.T) {
	n := 0
	for _, doc := range linkedDocs(t) {
		text := readFile(t, doc)
		for i, line := range strings.Split(Prose(text), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(target) {
					continue // http:, https:, mailto:
				}
				n++
				where := doc + ":" + strconv.Itoa(i+1)
				file, frag, _ := strings.Cut(target, "#")
				dest := doc
				if file != "" {
					dest = filepath.ToSlash(filepath.Join(filepath.Dir(doc), file))
					if strings.HasPrefix(dest, "../") {
						t.Errorf("%s: %s leaves the repository", where, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(repo, dest)); err != nil {
						t.Errorf("%s: link %s: %s does not exist", where, target, dest)
						continue
					}
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: link %s: a fragment of a file that is not Markdown", where, target)
					continue
				}
				if !anchors(readFile(t, dest))[frag] {
					t.Errorf("%s: link %s: %s has no heading #%s", where, target, dest, frag)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no relative link found: the scan is broken")
	}
}
