package drill

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv/schemagen"
	"github.com/guestcheck/guestcheck/schema"
)

// TestSchemaIsTheTypes regenerates schema/freeze-drill-v1.schema.json
// from the Go types and Types and compares (-update rewrites it): the
// types are the one definition, the file their published form.
func TestSchemaIsTheTypes(t *testing.T) {
	want, err := schemagen.JSONSchema(reflect.TypeFor[Result](), Types(), schemagen.Doc{Base: schema.Base, File: "freeze-drill-v1.schema.json",
		Title: "guestcheck freeze-drill result, schema version 1",
		Desc:  "Output of guestcheck freeze-drill --format json: per VM, the freeze and thaw through its guest agent, their times, the filesystems, the fsfreeze hook's log and the guest's own prediction. Changes within schema_version 1 are additive: consumers must ignore keys they do not know."})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join("..", "..", "..", "schema", "freeze-drill-v1.schema.json")
	if *update {
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("schema/freeze-drill-v1.schema.json is not what the Go types generate: go test ./internal/host/drill -run TestSchemaIsTheTypes -update")
	}
}
