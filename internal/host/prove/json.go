package prove

import (
	"encoding/json"
	"io"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
)

// WriteJSON renders the report as one indented JSON document
// (schema_version 1, documented in docs/sealprep.md).
func WriteJSON(w io.Writer, r Report) error {
	r = clean.Value(r) // guests' text, as every output shows it
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
