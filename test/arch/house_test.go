package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFactsReadDownward: drawn from its folders and every file's imports,
// tests included, the fact layer points only down. No file under
// internal/fact imports shared (leaves aside), a check, the registry,
// seal, the host side or a command, so a test kit that builds a runner
// Env lives under internal/testenv.
func TestFactsReadDownward(t *testing.T) {
	root := repoRoot(t)
	err := filepath.WalkDir(filepath.Join(root, "internal/fact"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		for _, im := range f.Imports {
			s, _ := strconv.Unquote(im.Path.Value)
			to, ok := strings.CutPrefix(s, module+"/")
			if !ok {
				continue
			}
			switch layerOf(to) {
			case lParse, lFact, lLeaf:
			case lTestKit:
				if strings.HasPrefix(to, "internal/testenv") && !strings.HasPrefix(to, "internal/testenv/") {
					continue // testenv itself imports nothing above fact
				}
				if strings.HasPrefix(to, "internal/fact/") {
					continue
				}
				t.Errorf("%s imports %s, a test kit above the fact layer", rel, to)
			default:
				t.Errorf("%s imports %s (%s): nothing under internal/fact points up", rel, to, layerOf(to))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckPackagesNamedAfterFolders: a check's package is its folder's
// name without hyphens, so an import reads as the tree does.
func TestCheckPackagesNamedAfterFolders(t *testing.T) {
	for ip, k := range load(t) {
		rel := short(ip)
		if layerOf(rel) != lJudge {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), k.files[0], nil, parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.ReplaceAll(path.Base(rel), "-", ""); f.Name.Name != want {
			t.Errorf("%s declares package %s; name it %s, after its folder", rel, f.Name.Name, want)
		}
	}
}

// TestTestKitsImportOnlyDownward: internal/testenv itself stays below the
// kits under it, so that a fact package's tests may use it.
func TestTestKitsImportOnlyDownward(t *testing.T) {
	k := load(t)[module+"/internal/testenv"]
	if k == nil {
		t.Fatal("internal/testenv: no such package")
	}
	for _, im := range k.imports {
		if to, ok := strings.CutPrefix(im, module+"/"); ok && !slices.Contains([]layer{lParse, lFact, lLeaf}, layerOf(to)) {
			t.Errorf("internal/testenv imports %s (%s): fact packages' tests use it", to, layerOf(to))
		}
	}
}
