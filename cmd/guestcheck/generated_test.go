package main

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"os"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/docgen"
)

// What the checks say of themselves (runner.Check and its runner.Code
// descriptions) is written once, in Go; everything a user reads about
// them is generated from it here: each check's page (its code tables, or
// the whole page for a check that has none yet), the runner's page, the
// reference's checks table and code index, the README's list, the
// package description, the man page and the completions.
// `go test ./cmd/guestcheck -run TestGenerated -update` rewrites them.

const generatedHint = "(generated from the check's codes: go test ./cmd/guestcheck -run TestGenerated -update)"

// TestGenerated regenerates every file and block above and compares.
func TestGenerated(t *testing.T) {
	for _, c := range checks.All {
		page := "../../docs/checks/" + c.ID + ".md"
		if _, err := os.Stat(page); errors.Is(err, iofs.ErrNotExist) {
			compareFile(t, page, []byte(checkPage(c)))
			continue
		}
		testenv.GeneratedBlock(t, page, "codes", codeTables(c.Codes), *update)
	}
	testenv.GeneratedBlock(t, "../../docs/checks/runner.md", "codes", codeTables(runner.Codes), *update)
	testenv.GeneratedBlock(t, "../../docs/reference.md", "checks", checksTable(checks.All), *update)
	testenv.GeneratedBlock(t, "../../docs/reference.md", "codes", codeIndex(checks.All), *update)
	testenv.GeneratedBlock(t, "../../README.md", "checks", readmeList(checks.All), *update)
	compareFile(t, "../../nfpm.yaml", packageYAML(t, checks.All))
	for p, want := range referenceFiles(t) {
		compareFile(t, p, want)
		// A Go expression left inside a quoted help string (a raw
		// string's "` + name + `" in an interpreted one) reaches the
		// operator verbatim.
		if bytes.Contains(want, []byte("` + ")) || bytes.Contains(want, []byte(" + `")) {
			t.Errorf("%s holds Go source text (` + ... + `): a help string concatenates inside its quotes", p)
		}
	}
	cmd := command(checks.All)
	testenv.GeneratedBlock(t, "../../docs/reference.md", "guestcheck-commands", docgen.MarkdownCommands(cmd), *update)
	testenv.GeneratedBlock(t, "../../docs/reference.md", "guestcheck-options", docgen.MarkdownOptions(cmd), *update)
}

// compareFile holds the file at p to want, or writes it with -update.
func compareFile(t *testing.T, p string, want []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is not what the checks' descriptions generate (%v); go test ./cmd/guestcheck -run TestGenerated -update\n%s", p, err, testenv.LineDiff(string(want), string(got)))
	}
}

// codeTables renders codes as the reference's tables, one per group.
func codeTables(cs []runner.Code) string {
	var b strings.Builder
	group := "\x00"
	for _, c := range cs {
		if c.Group != group {
			if group != "\x00" {
				b.WriteString("\n")
			}
			group = c.Group
			if group != "" {
				b.WriteString("### " + group + "\n\n")
			}
			b.WriteString("| Code | Status | Meaning | Fix |\n|---|---|---|---|\n")
		}
		b.WriteString("| `" + c.ID + "` | " + cell(c.Status) + " | " + cell(c.Meaning) + " | " + cell(fixCell(c)) + " |\n")
	}
	return b.String()
}

// fixCell is a code's fixes in one cell, placeholders as metavariables.
func fixCell(c runner.Code) string {
	var parts []string
	if c.Fix != "" {
		parts = append(parts, runner.Metavars(c.Fix))
	}
	if c.RootFix != "" {
		parts = append(parts, "Under `--root`: "+runner.Metavars(c.RootFix))
	}
	for _, k := range c.Cases {
		parts = append(parts, upperFirst(k.When)+": "+runner.Metavars(k.Fix))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "<br>")
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// cell escapes a table cell's bars.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// checkPage is the whole reference page of a check that has none yet.
func checkPage(c runner.Check) string {
	var b strings.Builder
	b.WriteString("# Check `" + c.ID + "`\n\n" + c.Title + ": " + c.Description + ".\n\n")
	b.WriteString("| | |\n|---|---|\n| ID | `" + c.ID + "` |\n")
	b.WriteString("| Configuration | `checks." + c.ID + ".timeout` and `checks." + c.ID + ".enabled`")
	for _, sec := range c.Sections() {
		b.WriteString(", `" + sec + ".*`")
	}
	b.WriteString(" (guestcheck.yaml(5)) |\n\n")
	if c.Why != "" {
		b.WriteString("## Why it matters\n\n" + c.Why + "\n\n")
	}
	b.WriteString("## Codes\n\n<!-- codes:begin " + generatedHint + " -->\n" + codeTables(c.Codes) + "<!-- codes:end -->\n")
	return b.String()
}

// checksTable is the reference's table of checks.
func checksTable(all []runner.Check) string {
	var b strings.Builder
	b.WriteString("| ID | what it verifies | reference |\n|---|---|---|\n")
	for _, c := range all {
		b.WriteString("| `" + c.ID + "` | " + cell(c.Description) + " | [checks/" + c.ID + ".md](checks/" + c.ID + ".md) |\n")
	}
	return b.String()
}

// codeIndex is the reference's index of every check's codes.
func codeIndex(all []runner.Check) string {
	var b strings.Builder
	b.WriteString("| check | codes |\n|---|---|\n")
	for _, c := range all {
		b.WriteString("| `" + c.ID + "` |")
		for _, k := range c.Codes {
			b.WriteString(" `" + k.ID + "`")
		}
		b.WriteString(" |\n")
	}
	return b.String()
}

// readmeList is the README's list of the checks: ID, page and title.
func readmeList(all []runner.Check) string {
	var b strings.Builder
	for _, c := range all {
		b.WriteString("- [`" + c.ID + "`](docs/checks/" + c.ID + ".md): " + c.Title + "\n")
	}
	return b.String()
}

// packageYAML is nfpm.yaml with its description's list of checks
// generated: the line "Its checks: ..." and what follows up to the
// sentence after it.
func packageYAML(t *testing.T, all []runner.Check) []byte {
	b, err := os.ReadFile("../../nfpm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	const from, to = "Its checks:", "It only reads"
	i, j := strings.Index(s, from), strings.Index(s, to)
	if i < 0 || j < i {
		t.Fatalf("nfpm.yaml: the description has no %q ... %q", from, to)
	}
	// Reflow from the start of the line holding "Its checks:" to the end
	// of the paragraph's line holding " It only reads".
	lineStart := strings.LastIndex(s[:i], "\n") + 1
	lineEnd := j + strings.Index(s[j:], "\n")
	text := strings.Join(strings.Fields(s[lineStart:i]), " ") + " " + from + " " + strings.Join(checkIDsWithAnd(all), " ") + ". " + s[j:lineEnd]
	return []byte(s[:lineStart] + wrap(text, "  ", 74) + s[lineEnd:])
}

func checkIDsWithAnd(all []runner.Check) []string {
	var out []string
	for i, c := range all {
		switch {
		case i == len(all)-1:
			out = append(out, c.ID)
		case i == len(all)-2:
			out = append(out, c.ID, "and")
		default:
			out = append(out, c.ID+",")
		}
	}
	return out
}

// wrap fills text to width, each line indented.
func wrap(text, indent string, width int) string {
	var b, line strings.Builder
	for _, w := range strings.Fields(text) {
		if line.Len() > 0 && len(indent)+line.Len()+1+len(w) > width {
			b.WriteString(indent + line.String() + "\n")
			line.Reset()
		}
		if line.Len() > 0 {
			line.WriteString(" ")
		}
		line.WriteString(w)
	}
	b.WriteString(indent + line.String())
	return b.String()
}
