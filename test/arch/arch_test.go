// Package arch holds the repository to its layering (docs/architecture.md):
// parsers import no other layer, fact packages are shared by both binaries
// and import no judge, sealprep links no judge, and no function outside
// tests grows past 100 lines. It reads the source with go/parser, so it
// needs no build and runs as any user.
package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/guestcheck/guestcheck"

// pkg is one package directory of the module: its import path and what its
// non-test files import.
type pkg struct {
	path    string
	dir     string
	imports []string
	files   []string
}

// repoRoot is the module's top directory, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}

// load parses the imports of every non-test Go file of the module, leaving
// out third_party (its own module) and testdata.
func load(t *testing.T) map[string]*pkg {
	t.Helper()
	root := repoRoot(t)
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "third_party", "testdata", ".git", "tools":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.Dir(p)
		rel, _ := filepath.Rel(root, dir)
		ip := module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		k := pkgs[ip]
		if k == nil {
			k = &pkg{path: ip, dir: dir}
			pkgs[ip] = k
		}
		k.files = append(k.files, p)
		for _, im := range f.Imports {
			s, _ := strconv.Unquote(im.Path.Value)
			if !slices.Contains(k.imports, s) {
				k.imports = append(k.imports, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// deps is the transitive closure of p's imports: the module's packages and
// the outside packages they import.
func deps(pkgs map[string]*pkg, p string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(ip string) {
		if seen[ip] {
			return
		}
		seen[ip] = true
		if k := pkgs[ip]; k != nil {
			for _, im := range k.imports {
				walk(im)
			}
		}
	}
	walk(p)
	delete(seen, p)
	return seen
}

func short(ip string) string { return strings.TrimPrefix(ip, module+"/") }

// TestSealprepLinksNoJudge: sealprep plans from the shared facts, so it
// must not pull in the check runner, guestcheck's configuration or netlink.
func TestSealprepLinksNoJudge(t *testing.T) {
	pkgs := load(t)
	d := deps(pkgs, module+"/cmd/sealprep")
	for _, bad := range []string{module + "/internal/shared/runner", module + "/internal/shared/config", module + "/internal/checks", "github.com/vishvananda/netlink"} {
		if d[bad] {
			t.Errorf("cmd/sealprep links %s (through %s)", short(bad), why(pkgs, module+"/cmd/sealprep", bad))
		}
	}
}

// why names one import chain from p to target, for the error message.
func why(pkgs map[string]*pkg, p, target string) string {
	prev := map[string]string{p: ""}
	queue := []string{p}
	for len(queue) > 0 {
		ip := queue[0]
		queue = queue[1:]
		if ip == target {
			var chain []string
			for c := ip; c != ""; c = prev[c] {
				chain = append([]string{short(c)}, chain...)
			}
			return strings.Join(chain, " -> ")
		}
		if k := pkgs[ip]; k != nil {
			for _, im := range k.imports {
				if _, ok := prev[im]; !ok {
					prev[im] = ip
					queue = append(queue, im)
				}
			}
		}
	}
	return "?"
}

// TestOnlyCommandsImportRegistry: the registry is wiring for guestcheck's
// command; an area or fact package that imported it would be judging by
// way of other areas.
func TestOnlyCommandsImportRegistry(t *testing.T) {
	for ip, k := range load(t) {
		if strings.HasPrefix(ip, module+"/cmd/") || strings.HasPrefix(ip, module+"/test/") {
			continue
		}
		for _, im := range k.imports {
			if im == module+"/internal/checks" || strings.HasPrefix(im, module+"/cmd/") {
				t.Errorf("%s imports %s", short(ip), short(im))
			}
		}
	}
}

// TestNoLongFunctions: a function over 100 lines outside tests is a sign
// that a step wants its own name (DESIGN.md's size guide).
func TestNoLongFunctions(t *testing.T) {
	const limit = 100
	for _, k := range load(t) {
		for _, p := range k.files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				var body *ast.BlockStmt
				name := "a function literal"
				switch x := n.(type) {
				case *ast.FuncDecl:
					body, name = x.Body, x.Name.Name
				case *ast.FuncLit:
					body = x.Body
				}
				if body == nil {
					return true
				}
				start, end := fset.Position(n.Pos()), fset.Position(body.End())
				if lines := end.Line - start.Line + 1; lines > limit {
					rel, _ := filepath.Rel(repoRoot(t), p)
					t.Errorf("%s:%d: %s is %d lines (limit %d)", rel, start.Line, name, lines, limit)
				}
				return true
			})
		}
	}
}

// TestGuestIDLinksNoNetlink: sealprep prove compares identities with
// guestid, and sealprep links no netlink; a running guest's links come
// to an Identity from its caller (netstate.IdentityInterfaces, or the
// guest agent), never from guestid itself.
func TestGuestIDLinksNoNetlink(t *testing.T) {
	pkgs := load(t)
	d := deps(pkgs, module+"/internal/fact/identity/guestid")
	for _, bad := range []string{"github.com/vishvananda/netlink", module + "/internal/fact/netstate", module + "/internal/shared/runner"} {
		if d[bad] {
			t.Errorf("internal/fact/identity/guestid links %s (through %s)", short(bad), why(pkgs, module+"/internal/fact/identity/guestid", bad))
		}
	}
}

// leaves are packages every layer may use because they import nothing of
// the module: the JUnit document guestcheck's report, fleet and prove
// share (sealprep links it through prove, so it may not reach the
// runner); the image header parser, pure and fuzzed, that runs before any
// tool opens a downloaded image; the host name rule the configuration and
// the hostname check share; the closest-name suggestion of every message;
// the build stamp; the embedded reference pages (docs) and JSON schemas
// (schema, which guestcheck fleet --merge checks surveys against).
var leaves = []string{
	"internal/shared/junitxml", "internal/host/image/imgfmt", "internal/shared/hostrule",
	"internal/shared/suggest", "internal/shared/buildinfo", "internal/shared/clean", "internal/shared/reportv1", "docs", "schema",
}

// TestLeavesImportNothing holds the leaf packages to that rule.
func TestLeavesImportNothing(t *testing.T) {
	for _, k := range listed(t, load(t), leaves) {
		for _, im := range k.imports {
			if strings.HasPrefix(im, module+"/") {
				t.Errorf("%s imports %s: a leaf package imports nothing of the module", short(k.path), short(im))
			}
		}
	}
}

// listed are the packages a list of this test names. Each must exist, so
// that a package renamed or moved cannot leave a rule unnoticed.
func listed(t *testing.T, pkgs map[string]*pkg, rels []string) []*pkg {
	t.Helper()
	var out []*pkg
	for _, rel := range rels {
		k := pkgs[module+"/"+rel]
		if k == nil {
			t.Errorf("%s: no such package (update the list in test/arch)", rel)
			continue
		}
		out = append(out, k)
	}
	return out
}
