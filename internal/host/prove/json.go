package prove

import (
	"encoding/json"
	"io"
)

// WriteJSON renders the report as one indented JSON document
// (schema_version 1, documented in docs/sealprep.md).
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
