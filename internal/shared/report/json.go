package report

import (
	"encoding/json"
	"io"
)

// WriteJSON writes r as indented JSON (schema version 1, see
// schema/report-v1.schema.json) followed by a newline.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
