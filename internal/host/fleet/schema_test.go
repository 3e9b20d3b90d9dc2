package fleet

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv/schemagen"
	"github.com/guestcheck/guestcheck/schema"
)

// TestSchemasAreTheTypes regenerates the schema files the Go types
// define and compares them with schema/ (go test -update rewrites
// them, with render_test.go's goldens): the types, their tags and their Types are the one definition
// of the documents, the files its published form.
func TestSchemasAreTheTypes(t *testing.T) {
	for name, gen := range map[string]func(string) ([]byte, error){
		"report-v1.schema.json":       schemagen.ReportSchema,
		"finding-line-v1.schema.json": schemagen.FindingLineSchema,
		"fleet-v1.schema.json":        surveySchema,
	} {
		want, err := gen(schema.Base)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join("..", "..", "..", "schema", name)
		if *update {
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("schema/%s is not what the Go types generate: go test ./internal/host/fleet -run TestSchemasAreTheTypes -update", name)
		}
	}
}

// surveySchema is schema/fleet-v1.schema.json as the Go types write it.
func surveySchema(base string) ([]byte, error) {
	return schemagen.JSONSchema(reflect.TypeFor[Result](), SurveyTypes(), schemagen.Doc{Base: base, File: "fleet-v1.schema.json",
		Title: "guestcheck fleet survey, schema version 1",
		Desc:  "Output of guestcheck fleet --format json: the identity items VMs share, and every VM's verdict with its own guestcheck report. Changes within schema_version 1 are additive: consumers must ignore keys they do not know."})
}
