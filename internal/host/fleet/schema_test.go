package fleet

import (
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv/schemagen"
)

// TestSchemasAreTheTypes regenerates the schema files the Go types
// define and compares them with schema/ (go test -update rewrites
// them, with render_test.go's goldens): the types, their tags and their
// Types are the one definition of the documents, the files its
// published form.
func TestSchemasAreTheTypes(t *testing.T) {
	for _, d := range []schemagen.Doc{schemagen.Report, schemagen.FindingLine, surveyDoc} {
		schemagen.Compare(t, d, *update)
	}
}

// surveyDoc is schema/fleet-v1.schema.json.
var surveyDoc = schemagen.Doc{File: "fleet-v1.schema.json", Root: reflect.TypeFor[Result](), Types: SurveyTypes(),
	Title: "guestcheck fleet survey, schema version 1",
	Desc:  "Output of guestcheck fleet --format json: the identity items VMs share, and every VM's verdict with its own guestcheck report. Changes within schema_version 1 are additive: consumers must ignore keys they do not know."}
