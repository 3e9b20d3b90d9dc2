package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/fact/identity/catalogue"
)

// cataloguePkg is the one package that spells where identity lives.
const cataloguePkg = module + "/internal/fact/identity/catalogue"

// TestIdentityPathsLiveInTheCatalogue: a production package that wrote an
// identity item's path itself could look where the catalogue does not, and
// sealprep and guestcheck would disagree about that item again. Every
// string literal outside the catalogue that is one of its places, or a
// file inside one of its directory places, fails here.
func TestIdentityPathsLiveInTheCatalogue(t *testing.T) {
	var bad []string
	for ip, k := range load(t) {
		if ip == cataloguePkg {
			continue
		}
		for _, p := range k.files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.HasPrefix(s, "/") {
					return true
				}
				if catalogue.IsIdentityPath(strings.TrimSuffix(s, "/")) {
					rel, _ := filepath.Rel(repoRoot(t), p)
					bad = append(bad, rel+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+s)
				}
				return true
			})
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: an identity path; take it from internal/fact/identity/catalogue", b)
	}
}

// TestCatalogueIsWhole: every item says where it lives, what a template
// holds, which operation handles it and where the entry comes from.
func TestCatalogueIsWhole(t *testing.T) {
	seen := map[string]bool{}
	for _, it := range catalogue.Items {
		if seen[it.Name] {
			t.Errorf("%s: listed twice", it.Name)
		}
		seen[it.Name] = true
		if it.What == "" || len(it.Places) == 0 || it.Rule == "" || it.Op == "" || it.Shared == "" || it.Source == "" {
			t.Errorf("%s: an entry needs What, Places, Rule, Op, Shared and Source: %+v", it.Name, it)
		}
		for _, pl := range it.Places {
			if !strings.HasPrefix(pl.Path, "/") || pl.Stack == "" {
				t.Errorf("%s: place %+v: an absolute guest path and its stack", it.Name, pl)
			}
		}
	}
}
