package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// reportKeys are JSON keys only guestcheck's report has: a struct that
// decodes one of them is a report type of its own.
var reportKeys = []string{"findings", "remediation", "machine_id_hash", "dhcp_client_ids", "boot_id"}

// TestOneReportType (issue 29): guestcheck's report is decoded by prove,
// fleet and the test suites, and each once kept its own partial copy of
// the type, which drifted from what guestcheck writes. Every Go file of
// the repository, tests and build-tagged suites included, must take the
// report's types from internal/shared/reportv1.
func TestOneReportType(t *testing.T) {
	root := repoRoot(t)
	own := filepath.Join(root, "internal", "shared", "reportv1")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p == own || n == "testdata" || strings.HasPrefix(n, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			fl, ok := n.(*ast.Field)
			if !ok || fl.Tag == nil {
				return true
			}
			tag, err := strconv.Unquote(fl.Tag.Value)
			if err != nil {
				return true
			}
			key, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
			for _, k := range reportKeys {
				if key == k {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d: a field for the report's %q: use the types of internal/shared/reportv1", rel, fset.Position(fl.Pos()).Line, key)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
