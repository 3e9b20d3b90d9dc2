package report

import (
	"fmt"
	"io"

	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// Format names one rendering of a Report. Every format renders the same
// Report; none of them decides the exit code.
type Format string

// The formats, each for the consumer named in its comment.
const (
	FormatText       Format = "text"       // a person on a console
	FormatJSON       Format = "json"       // programs: schema/report-v1.schema.json
	FormatPrometheus Format = "prometheus" // node_exporter's textfile collector
	FormatNagios     Format = "nagios"     // Nagios, Icinga, NRPE: plugin output
	FormatJUnit      Format = "junit"      // CI systems and Packer pipelines
	FormatTAP        Format = "tap"        // TAP version 13 harnesses (prove)
	FormatJSONL      Format = "jsonl"      // journald and log shippers: one finding a line
)

// Formats lists every format, in the order --help names them.
var Formats = []Format{FormatText, FormatJSON, FormatPrometheus, FormatNagios, FormatJUnit, FormatTAP, FormatJSONL}

// Options tunes the renderers that have choices; each ignores the fields
// of the others.
type Options struct {
	// Text is for FormatText.
	Text TextOptions
	// Nagios is for FormatNagios.
	Nagios NagiosOptions
}

// Render writes r in format f. Text shows r's strings cleaned
// (clean.Text): each on one line, without escape sequences, other control
// characters or bidi overrides; Nagios and TAP lines likewise. The
// structured formats keep a finding's line breaks and escape what their
// syntax needs (JSON, YAML in TAP, XML, Prometheus labels), for the
// programs that read them; guestcheck fleet cleans what it shows of a
// guest's report.
func Render(w io.Writer, r Report, f Format, o Options) error {
	switch f {
	case FormatText:
		return WriteText(w, clean.Value(r), o.Text)
	case FormatJSON:
		return WriteJSON(w, r)
	case FormatPrometheus:
		return WritePrometheus(w, r)
	case FormatNagios:
		return WriteNagios(w, r, o.Nagios)
	case FormatJUnit:
		return WriteJUnit(w, r)
	case FormatTAP:
		return WriteTAP(w, r)
	case FormatJSONL:
		return WriteJSONL(w, r)
	}
	return fmt.Errorf("unknown format %q", f)
}

// valid maps a status that is not one of the five to error, as the overall
// status does: a renderer never shows an unknown status as healthy.
func valid(s runner.Status) runner.Status {
	if !s.Valid() {
		return runner.Error
	}
	return s
}
