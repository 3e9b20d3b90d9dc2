package drill

import (
	"reflect"
	"testing"

	"github.com/guestcheck/guestcheck/internal/testenv/schemagen"
)

// TestSchemaIsTheTypes regenerates schema/freeze-drill-v1.schema.json
// from the Go types and Types and compares (-update rewrites it): the
// types are the one definition, the file their published form.
func TestSchemaIsTheTypes(t *testing.T) {
	schemagen.Compare(t, schemagen.Doc{File: "freeze-drill-v1.schema.json", Root: reflect.TypeFor[Result](), Types: Types(),
		Title: "guestcheck freeze-drill result, schema version 1",
		Desc:  "Output of guestcheck freeze-drill --format json: per VM, the freeze and thaw through its guest agent, their times, the filesystems, the fsfreeze hook's log and the guest's own prediction. Changes within schema_version 1 are additive: consumers must ignore keys they do not know."}, *update)
}
