package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/internal/testenv/docgen"
)

// TestPackageDescription holds the package description (nfpm.yaml) to
// sealprep's commands: after its first "sealprep", it names each one.
func TestPackageDescription(t *testing.T) {
	desc := testenv.ReadPackage(t, "../../nfpm.yaml").Words()
	i := strings.Index(desc, "sealprep ")
	if i < 0 {
		t.Fatal("nfpm.yaml's description does not name sealprep")
	}
	for _, sub := range command(seal.All).Commands {
		if sub.Name == "help" || sub.Name == "completion" {
			continue
		}
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(sub.Name) + `\b`).MatchString(desc[i:]) {
			t.Errorf("nfpm.yaml's description does not name the command sealprep %s", sub.Name)
		}
	}
}

// TestHelpNamesInstalledDocs: where sealprep's help or man page names a
// document, it names the path the packages install it at.
func TestHelpNamesInstalledDocs(t *testing.T) {
	pkg := testenv.ReadPackage(t, "../../nfpm.yaml")
	var text bytes.Buffer
	cmd := command(seal.All)
	cmd.WriteHelp(&text)
	for _, sub := range cmd.Commands {
		sub.WriteHelp(&text)
	}
	docgen.WriteMan(&text, cmd, manInfo)
	for _, m := range regexp.MustCompile(`(^|[^/\w.-])(docs/[\w./-]*\w)`).FindAllStringSubmatch(text.String(), -1) {
		t.Errorf("the help names %s, a path in the repository: name where the packages install it (/usr/share/doc/guestcheck/%s)", m[2], strings.TrimPrefix(m[2], "docs/"))
	}
	for _, p := range regexp.MustCompile(`/usr/share/doc/guestcheck/[\w./-]*\w`).FindAllString(text.String(), -1) {
		if !pkg.Installs(p) && !strings.HasSuffix(p, "/checks") {
			t.Errorf("the help names %s, which nfpm.yaml does not install", p)
		}
	}
}
