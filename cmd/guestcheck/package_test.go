package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/checks"
	"github.com/guestcheck/guestcheck/internal/testenv"
)

// TestPackageDescription holds the package description (nfpm.yaml, what
// apt show and rpm -qi print) to the code: it names every registered
// check by its ID and every guestcheck command, so that a new check or
// command cannot leave it behind.
func TestPackageDescription(t *testing.T) {
	desc := testenv.ReadPackage(t, "../../nfpm.yaml").Words()
	for _, c := range checks.All {
		if !regexp.MustCompile(`(^|[\s(,])` + regexp.QuoteMeta(c.ID) + `($|[\s),.;:])`).MatchString(desc) {
			t.Errorf("nfpm.yaml's description does not name check %s", c.ID)
		}
	}
	for _, sub := range command(checks.All).Commands {
		if sub.Name == "help" || sub.Name == "completion" {
			continue
		}
		if !strings.Contains(desc, "guestcheck "+sub.Name+" ") {
			t.Errorf("nfpm.yaml's description does not name the command guestcheck %s", sub.Name)
		}
	}
}

// repoDoc is a document's path in the repository (docs/X.md), which an
// installed guestcheck's reader does not have; installedDoc one the
// packages install.
var (
	repoDoc      = regexp.MustCompile(`(^|[^/\w.-])(docs/[\w./-]*\w)`)
	installedDoc = regexp.MustCompile(`/usr/share/doc/guestcheck/[\w./-]*\w`)
)

// TestHelpNamesInstalledDocs: where --help or a man page names a
// document, it names the path the packages install it at.
func TestHelpNamesInstalledDocs(t *testing.T) {
	pkg := testenv.ReadPackage(t, "../../nfpm.yaml")
	var text bytes.Buffer
	cmd := command(checks.All)
	cmd.WriteHelp(&text)
	for _, sub := range cmd.Commands {
		sub.WriteHelp(&text)
	}
	for _, b := range referenceFiles(t) {
		text.Write(b)
	}
	// The man pages escape a hyphen (roff's \-).
	all := strings.ReplaceAll(text.String(), `\-`, "-")
	for _, m := range repoDoc.FindAllStringSubmatch(all, -1) {
		t.Errorf("the help names %s, a path in the repository: name where the packages install it (/usr/share/doc/guestcheck/%s)", m[2], strings.TrimPrefix(m[2], "docs/"))
	}
	found := installedDoc.FindAllString(all, -1)
	for _, p := range found {
		if strings.HasSuffix(p, "/checks") {
			continue // the directory of the check pages
		}
		if !pkg.Installs(p) {
			t.Errorf("the help names %s, which nfpm.yaml does not install", p)
		}
	}
	if len(found) == 0 {
		t.Error("the help names no installed document: the scan is broken")
	}
}
