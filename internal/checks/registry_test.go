package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/check"
)

// TestRegistry holds every check to the conventions: unique kebab-case IDs,
// a title and description, declared kebab-case codes, and a reference page
// that documents each code, linked from the README (whose code index
// TestReadmeCodeIndex generates).
func TestRegistry(t *testing.T) {
	if len(All) == 0 {
		t.Fatal("no checks registered")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range All {
		if !check.IsKebab(c.ID) || seen[c.ID] {
			t.Errorf("check ID %q is not unique kebab-case", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Description == "" || c.Run == nil {
			t.Errorf("%s: needs a Title, a Description and a Run", c.ID)
		}
		if len(c.Codes) == 0 {
			t.Errorf("%s: declares no finding codes", c.ID)
		}
		page := filepath.Join("../../docs/checks", c.ID+".md")
		doc, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("%s: no reference page: %v", c.ID, err)
			continue
		}
		for _, code := range c.Codes {
			if !check.IsKebab(code) {
				t.Errorf("%s: code %q is not kebab-case", c.ID, code)
			}
			if !strings.Contains(string(doc), "`"+code+"`") {
				t.Errorf("%s: code %s is not documented in %s", c.ID, code, page)
			}
		}
		if !strings.Contains(string(readme), "docs/checks/"+c.ID+".md") {
			t.Errorf("%s: README.md does not link docs/checks/%s.md", c.ID, c.ID)
		}
	}
	for _, c := range All {
		for _, d := range c.DependsOn {
			if !seen[d] {
				t.Errorf("%s depends on unknown check %q", c.ID, d)
			}
		}
	}
}

// TestDiskChecksDocumented holds both checks to their reference pages
// until they are listed in All (whose registry test does the same).
func TestDiskChecksDocumented(t *testing.T) {
	for _, c := range []check.Check{Fstab, DiskSize} {
		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "checks", c.ID+".md"))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, code := range c.Codes {
			if !check.IsKebab(code) || seen[code] || !strings.HasPrefix(code, strings.SplitN(c.ID, "-", 2)[0]+"-") {
				t.Errorf("%s: code %q is not unique kebab-case with the check's prefix", c.ID, code)
			}
			seen[code] = true
			if !strings.Contains(string(doc), "`"+code+"`") {
				t.Errorf("%s: code %s is not documented", c.ID, code)
			}
		}
		if !check.IsKebab(c.ID) || c.Title == "" || c.Description == "" || c.Run == nil {
			t.Errorf("%s: incomplete check", c.ID)
		}
	}
}

// TestNetworkChecksDocumented holds the three network checks to the
// registry's conventions on their own, whether or not All lists them yet:
// unique kebab-case codes, each documented in the check's reference page.
func TestNetworkChecksDocumented(t *testing.T) {
	for _, c := range []check.Check{Routes, DNS, NetworkIdentity} {
		if !check.IsKebab(c.ID) || c.Title == "" || c.Description == "" || c.Run == nil || len(c.DependsOn) != 0 {
			t.Errorf("%s: incomplete check %+v", c.ID, c)
		}
		doc, err := os.ReadFile(filepath.Join("../../docs/checks", c.ID+".md"))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, code := range c.Codes {
			if !check.IsKebab(code) || seen[code] {
				t.Errorf("%s: code %q is not unique kebab-case", c.ID, code)
			}
			seen[code] = true
			if !strings.Contains(string(doc), "`"+code+"`") {
				t.Errorf("%s: code %s is not documented", c.ID, code)
			}
		}
	}
}
