package testenv

import (
	"os"
	"path"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Package is what nfpm.yaml says of the .deb and .rpm: the description
// apt show and rpm -qi print, and every file installed.
type Package struct {
	Description string
	Contents    []struct{ Src, Dst, Type string }
}

// ReadPackage reads nfpm.yaml at path.
func ReadPackage(t testing.TB, path string) Package {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p Package
	if err := yaml.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// Installs says whether the package installs the file at dst: as a
// file of its own, or matched by a glob source into a directory.
func (p Package) Installs(dst string) bool {
	for _, c := range p.Contents {
		if c.Dst == dst {
			return true
		}
		if strings.HasSuffix(c.Dst, "/") && path.Dir(dst)+"/" == c.Dst {
			if ok, _ := path.Match(path.Base(c.Src), path.Base(dst)); ok {
				return true
			}
		}
	}
	return false
}

// Words is the description as single-spaced text, its line breaks gone.
func (p Package) Words() string { return strings.Join(strings.Fields(p.Description), " ") }
