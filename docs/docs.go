// Package docs carries the reference pages of the checks (docs/checks/*.md,
// and docs/checks/runner.md for the codes the runner reports on any check)
// inside guestcheck, so that `guestcheck explain CODE` answers from the
// same text as the pages, on a console with no network and no package
// documentation installed. The pages are the source; nothing here is
// written twice.
package docs

import (
	"embed"
	"path"
	"sort"
	"strings"
)

//go:embed checks/*.md
var pages embed.FS

// Runner is the name of the page of the runner's own codes
// (docs/checks/runner.md), which it reports on any check; its entries
// carry it as their Check.
const Runner = "runner"

// InstalledDir is where the packages install the pages.
const InstalledDir = "/usr/share/doc/guestcheck/checks"

// Code is one finding code's reference entry, from the Codes tables of its
// check's page; Check is Runner for the runner's own codes.
type Code struct {
	Code, Check, Status, Meaning, Fix string
}

// Page is the installed page of the code's check, the reference a JSON
// finding carries.
func (c Code) Page() string { return PageOf(c.Check) }

// PageOf is the installed page of check id.
func PageOf(id string) string { return InstalledDir + "/" + id + ".md" }

// Codes returns every documented code, by code. A code documented on two
// pages keeps the first (pages in name order).
func Codes() map[string]Code {
	out := map[string]Code{}
	names, _ := pages.ReadDir("checks")
	for _, e := range names {
		b, err := pages.ReadFile(path.Join("checks", e.Name()))
		if err != nil {
			continue
		}
		check := strings.TrimSuffix(e.Name(), ".md")
		for _, c := range ParseCodes(check, string(b)) {
			if _, dup := out[c.Code]; !dup {
				out[c.Code] = c
			}
		}
	}
	return out
}

// Checks returns the IDs of the checks that have a page, sorted; the
// runner's page is not one.
func Checks() []string {
	names, _ := pages.ReadDir("checks")
	var out []string
	for _, e := range names {
		if id := strings.TrimSuffix(e.Name(), ".md"); id != Runner {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// ParseCodes reads the Codes tables of a check's page: Markdown tables
// whose header is Code, Status, Meaning, Fix (any case; the Meaning
// column may carry more words), one row per code in backquotes. Markup
// is reduced to plain text for a terminal.
func ParseCodes(check, page string) []Code {
	var out []Code
	inTable := false
	for _, line := range strings.Split(page, "\n") {
		cells, ok := tableRow(line)
		if !ok {
			inTable = false
			continue
		}
		if len(cells) == 4 && strings.EqualFold(cells[0], "code") && strings.EqualFold(cells[1], "status") {
			inTable = true
			continue
		}
		if !inTable || len(cells) != 4 || !strings.HasPrefix(cells[0], "`") {
			continue
		}
		out = append(out, Code{Code: strings.Trim(cells[0], "`"), Check: check,
			Status: plain(cells[1]), Meaning: plain(cells[2]), Fix: plain(cells[3])})
	}
	return out
}

// tableRow splits a Markdown table row into its cells; "\|" is a literal bar.
func tableRow(line string) ([]string, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil, false
	}
	line = strings.ReplaceAll(line[1:len(line)-1], `\|`, "\x00")
	var cells []string
	for _, c := range strings.Split(line, "|") {
		cells = append(cells, strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|")))
	}
	return cells, true
}

// plain drops Markdown emphasis and code quotes and keeps the text of
// links: the entry is read on a console.
func plain(s string) string {
	s = strings.NewReplacer("**", "", "<br>", " ", "`", "").Replace(s)
	for {
		i := strings.Index(s, "](")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], ")")
		open := strings.LastIndex(s[:i], "[")
		if j < 0 || open < 0 {
			break
		}
		s = s[:open] + s[open+1:i] + s[i+j+1:]
	}
	if s == "—" {
		return ""
	}
	return s
}
