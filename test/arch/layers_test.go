package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A layer is what a folder of the house holds (docs/architecture.md). A
// package's layer follows from its path alone, so a new package lands in
// a layer by where it is put, and one put nowhere fails TestEveryPackageHasALayer.
type layer string

const (
	lParse    layer = "parser"         // internal/parse/*: bytes in, values out
	lFact     layer = "fact"           // internal/fact/**: one guest fact, read once, for both binaries
	lShared   layer = "shared"         // internal/shared/*: runner, report, config, command lines
	lLeaf     layer = "leaf"           // imports nothing of the module (the leaves list)
	lJudge    layer = "check"          // internal/checks/<check-id>: gathers Facts, judges them
	lRegistry layer = "registry"       // internal/checks: All, each check's own Check
	lSeal     layer = "seal"           // internal/seal: sealprep's plan, executor and verify
	lHost     layer = "host side"      // internal/host/*: fleet, prove, qga, image, nocloud
	lTestKit  layer = "test support"   // *test, *fake and internal/testenv: linked by tests only
	lCommand  layer = "command"        // cmd/*: flags, wiring, rendering, exit codes
	lTest     layer = "test programme" // test/*: suites across the binaries
)

// layerOf is the layer a package's path puts it in, or "" for none.
func layerOf(rel string) layer {
	base := path.Base(rel)
	switch {
	case slices.Contains(leaves, rel):
		return lLeaf
	case rel == "internal/testenv" || strings.HasPrefix(rel, "internal/testenv/") ||
		strings.HasPrefix(rel, "internal/") && (strings.HasSuffix(base, "test") || strings.HasSuffix(base, "fake")):
		return lTestKit
	case strings.HasPrefix(rel, "internal/parse/"):
		return lParse
	case strings.HasPrefix(rel, "internal/fact/"):
		return lFact
	case strings.HasPrefix(rel, "internal/shared/"):
		return lShared
	case rel == "internal/checks":
		return lRegistry
	case strings.HasPrefix(rel, "internal/checks/") && strings.Count(rel, "/") == 2:
		return lJudge
	case rel == "internal/seal":
		return lSeal
	case strings.HasPrefix(rel, "internal/host/"):
		return lHost
	case strings.HasPrefix(rel, "cmd/"):
		return lCommand
	case strings.HasPrefix(rel, "test/"):
		return lTest
	}
	return ""
}

// mayImport says which layers a layer's production code may import.
// Nothing imports upward: facts never reach the runner or a check, checks
// never reach each other or the registry, sealprep's seal never reaches a
// check, the runner or the host side.
var mayImport = map[layer][]layer{
	lLeaf:     nil,
	lParse:    {lParse},
	lFact:     {lParse, lFact, lLeaf},
	lShared:   {lParse, lFact, lShared, lLeaf},
	lJudge:    {lParse, lFact, lShared, lLeaf},
	lRegistry: {lJudge, lShared, lLeaf},
	lSeal:     {lParse, lFact, lLeaf},
	lHost:     {lParse, lFact, lShared, lLeaf, lHost},
	lTestKit:  {lParse, lFact, lShared, lLeaf, lHost, lTestKit, lJudge, lSeal},
	lCommand:  {lParse, lFact, lShared, lLeaf, lHost, lJudge, lRegistry, lSeal},
	lTest:     {lParse, lFact, lShared, lLeaf, lHost, lTestKit, lSeal, lRegistry},
}

// TestEveryPackageHasALayer: a package in no folder of the house would
// escape every rule below.
func TestEveryPackageHasALayer(t *testing.T) {
	for ip := range load(t) {
		if rel := short(ip); layerOf(rel) == "" {
			t.Errorf("%s is in no layer: put it under internal/parse, fact, shared, checks/<check-id>, seal or host (docs/architecture.md)", rel)
		}
	}
}

// TestLayersImportDownward holds every package to its layer's imports.
func TestLayersImportDownward(t *testing.T) {
	pkgs := load(t)
	var names []string
	for ip := range pkgs {
		names = append(names, ip)
	}
	sort.Strings(names)
	for _, ip := range names {
		from := layerOf(short(ip))
		for _, im := range pkgs[ip].imports {
			if !strings.HasPrefix(im, module+"/") {
				continue
			}
			to := layerOf(short(im))
			if ok := slices.Contains(mayImport[from], to); !ok && !allowedWithinLayer(short(ip), short(im)) {
				t.Errorf("%s (%s) imports %s (%s): a %s may import only %v", short(ip), from, short(im), to, from, mayImport[from])
			}
		}
	}
}

// allowedWithinLayer are the imports across a layer's own rule that the
// design keeps on purpose: cloud-config judges user-data inside the
// cloud-init area and reuses its reading of cloud-init's state; dns
// resolves hostname.expected when the machine has no FQDN, and reads it
// through the hostname check's own section, so that the two checks cannot
// read that setting differently.
func allowedWithinLayer(from, to string) bool {
	return from == "internal/checks/cloud-config" && to == "internal/checks/cloud-init" ||
		from == "internal/checks/dns" && to == "internal/checks/hostname"
}

// TestChecksAreNamedAfterTheirIDs: a folder under internal/checks is the
// check whose Check it declares, with that ID, and the registry lists
// it, so the tree reads as --list does.
func TestChecksAreNamedAfterTheirIDs(t *testing.T) {
	pkgs := load(t)
	reg := pkgs[module+"/internal/checks"]
	if reg == nil {
		t.Fatal("internal/checks: no such package")
	}
	n := 0
	for ip, k := range pkgs {
		rel := short(ip)
		if layerOf(rel) != lJudge {
			continue
		}
		n++
		if id := checkID(t, k.files); id != path.Base(rel) {
			t.Errorf("%s: its Check's ID is %q; a check's folder is its ID", rel, id)
		}
		if !slices.Contains(reg.imports, ip) {
			t.Errorf("%s: the registry (internal/checks) does not list it", rel)
		}
	}
	if n < 10 {
		t.Fatalf("found only %d checks under internal/checks", n)
	}
}

// checkID reads the ID of the package's `var Check = runner.Check{ID: ...}`.
func checkID(t *testing.T, files []string) string {
	t.Helper()
	for _, p := range files {
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if len(vs.Names) != 1 || vs.Names[0].Name != "Check" || len(vs.Values) != 1 {
					continue
				}
				if cl, ok := vs.Values[0].(*ast.CompositeLit); ok {
					for _, e := range cl.Elts {
						kv, ok := e.(*ast.KeyValueExpr)
						if key, isIdent := kv.Key.(*ast.Ident); ok && isIdent && key.Name == "ID" {
							if lit, ok := kv.Value.(*ast.BasicLit); ok {
								v, _ := strconv.Unquote(lit.Value)
								return v
							}
						}
					}
				}
			}
		}
	}
	return ""
}
