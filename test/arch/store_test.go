package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyFactsMemo: the run's fact store (internal/fact/store) is filled
// only by fact packages, under keys of their own. A check or the runner
// carries the store to a fact's accessor; one that called store.Memo
// itself would choose how a shared fact is read, and the first check to
// ask would decide for every other.
func TestOnlyFactsMemo(t *testing.T) {
	const storePkg = module + "/internal/fact/store"
	for ip, k := range load(t) {
		if strings.HasPrefix(ip, module+"/internal/fact/") {
			continue
		}
		for _, p := range k.files {
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			for _, im := range f.Imports {
				if s, _ := strconv.Unquote(im.Path.Value); s == storePkg {
					name = path.Base(storePkg)
					if im.Name != nil {
						name = im.Name.Name
					}
				}
			}
			if name == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Memo" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
						t.Errorf("%s calls store.Memo: only fact packages fill the run's store", short(ip))
					}
				}
				return true
			})
		}
	}
}
