package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaBase is the URL the schema files' $id values share, so that one
// file's "$ref": "report-v1.schema.json#..." finds the other.
const schemaBase = "https://github.com/guestcheck/guestcheck/schema/"

// Schema compiles the JSON schema file name of dir (the repository's
// schema/ directory) with every other schema file there, so references
// between them resolve.
func Schema(t testing.TB, dir, name string) *jsonschema.Schema {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files in %s (%v)", dir, err)
	}
	c := jsonschema.NewCompiler()
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := c.AddResource(schemaBase+filepath.Base(p), doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(schemaBase + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Validate checks the JSON document b against s, "" when it is valid.
func Validate(s *jsonschema.Schema, b []byte) string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err == nil {
		err = s.Validate(inst)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
