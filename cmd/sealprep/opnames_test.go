package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/guestcheck/guestcheck/internal/seal"
)

// opMention is how a message outside sealprep names its operations: the
// fixes of guestcheck's findings, of prove's and of fleet's shared items
// ("sealprep operation machine-id", "--ops -ssh-host-keys").
var opMention = regexp.MustCompile(`sealprep operations? ([a-z0-9-]+)|--ops (-?[a-z0-9-]+(?:,-?[a-z0-9-]+)*)`)

// prose are the words a message puts after "--ops" when it names the
// flag rather than its value ("give --ops and --machine-id-mode").
var prose = map[string]bool{"and": true, "or": true, "a": true, "that": true, "to": true}

// TestMessagesNameRealOperations holds every string literal of the
// module's non-test Go source that names a sealprep operation to the
// operations sealprep has, so that a renamed operation cannot leave a fix
// pointing at nothing.
func TestMessagesNameRealOperations(t *testing.T) {
	// defaults and all are --ops words too.
	known := map[string]bool{"defaults": true, "all": true}
	for _, op := range seal.All {
		known[op.ID] = true
	}
	n := 0
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "third_party", "testdata", ".git", "tools", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(x ast.Node) bool {
			lit, ok := x.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range opMention.FindAllStringSubmatch(s, -1) {
				ids := m[1]
				if ids == "" {
					ids = m[2]
				}
				for _, id := range strings.Split(ids, ",") {
					if prose[id] {
						continue
					}
					n++
					if !known[strings.TrimPrefix(id, "-")] {
						t.Errorf("%s: %q names operation %q, which sealprep does not have (sealprep list)", p, m[0], id)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Fatalf("found %d operation names in messages; the walk is broken (guestid's fixes alone name six)", n)
	}
}
