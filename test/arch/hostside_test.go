package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// hostSide are the packages only the host-side verbs use (guestcheck
// fleet, sealprep prove) but that the guest's guestcheck links too, as
// one static binary.
var hostSide = []string{"internal/host/fleet", "internal/host/fleet/kubevirt", "internal/host/qga"}

// TestHostSideAddsNoStartupWork: a normal in-guest guestcheck run must not
// pay for the fleet code it links. These packages have no init function
// and no package-level variable computed by a call (a regexp compiled, a
// file read); only literals and errors.New.
func TestHostSideAddsNoStartupWork(t *testing.T) {
	for _, k := range listed(t, load(t), hostSide) {
		for _, p := range k.files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			where := func(n ast.Node) string {
				r, _ := filepath.Rel(repoRoot(t), p)
				return r + ":" + strconv.Itoa(fset.Position(n.Pos()).Line)
			}
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.Name == "init" {
						t.Errorf("%s: an init function runs at every guestcheck start", where(d))
					}
				case *ast.GenDecl:
					if d.Tok != token.VAR {
						continue
					}
					for _, s := range d.Specs {
						for _, v := range s.(*ast.ValueSpec).Values {
							if c := firstCall(v); c != nil {
								t.Errorf("%s: a package-level variable computed by a call runs at every guestcheck start; compute it when the verb runs", where(c))
							}
						}
					}
				}
			}
		}
	}
}

// firstCall finds a call in an initializer other than errors.New.
func firstCall(e ast.Expr) *ast.CallExpr {
	var found *ast.CallExpr
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false // runs when called, not at start
		}
		c, ok := n.(*ast.CallExpr)
		if !ok || found != nil {
			return found == nil
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "errors" && sel.Sel.Name == "New" {
				return false
			}
		}
		switch c.Fun.(type) {
		case *ast.ArrayType, *ast.ParenExpr:
			return true // a conversion: []byte(...), (*T)(nil)
		}
		found = c
		return false
	})
	return found
}
