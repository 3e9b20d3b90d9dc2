// Package docs names where the reference pages of the checks are
// installed (docs/checks/*.md) and turns their Markdown into console
// text. The pages' code tables are generated from the checks' own code
// descriptions (runner.Code), which `guestcheck explain` reads directly.
package docs

import "strings"

// Runner is the name of the page of the runner's own codes
// (docs/checks/runner.md), which it reports on any check.
const Runner = "runner"

// InstalledDir is where the packages install the pages.
const InstalledDir = "/usr/share/doc/guestcheck/checks"

// SourceDir is where the pages are in guestcheck's source tree.
const SourceDir = "docs/checks"

// PageOf is the installed page of check id.
func PageOf(id string) string { return InstalledDir + "/" + id + ".md" }

// Plain drops Markdown emphasis and code quotes and keeps the text of
// links, for a reference entry read on a console.
func Plain(s string) string {
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
