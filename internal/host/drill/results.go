package drill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/guestcheck/guestcheck/internal/host/fleet"
	"github.com/guestcheck/guestcheck/internal/shared/clean"
	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
)

// MaxResultFile bounds the result file ReadResult reads: a drill of a
// hundred VMs is well under 1 MiB, so a larger file is not a drill's.
const MaxResultFile = 16 << 20

// ReadResult reads the JSON result a drill wrote (guestcheck
// freeze-drill --output json:FILE) as guestcheck fleet --merge reads a
// survey: a regular file of at most MaxResultFile bytes, checked
// against the same rules the drill wrote it by (Types, the schema's
// source), of this tool and schema version, every string in it cleaned
// (clean.Value). Errors are one line naming the file. fi is the file
// read, for telling whether it changed since.
func ReadResult(path string) (r Result, fi os.FileInfo, err error) {
	b, fi, err := fleet.ReadBounded(path, MaxResultFile, nil, "a freeze-drill result")
	if err != nil {
		return Result{}, fi, err
	}
	if err := checkHead(path, b); err != nil {
		return Result{}, fi, err
	}
	if err := reportv1.CheckJSON(b, reflect.TypeFor[Result](), Types()); err != nil {
		var je *reportv1.JSONError
		if errors.As(err, &je) {
			return Result{}, fi, fmt.Errorf("%s: %s: not a valid freeze-drill result: %s", path, fleet.LineCol(b, int64(je.Offset)), oneLine(je.Msg))
		}
		return Result{}, fi, fmt.Errorf("%s: not a valid freeze-drill result: %s", path, oneLine(err.Error()))
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, fi, fmt.Errorf("%s: not a valid freeze-drill result: %s", path, oneLine(err.Error()))
	}
	return clean.Value(r), fi, nil
}

// checkHead refuses what is not a drill result of this schema version
// before the schema says so at more length: a fleet survey or a
// guestcheck report given by mistake is told so.
func checkHead(path string, b []byte) error {
	var h struct {
		SchemaVersion *int   `json:"schema_version"`
		Tool          string `json:"tool"`
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("%s: empty: write it with guestcheck freeze-drill --output json:%s", path, path)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Its Offset is just past the byte at fault; a file cut
			// short says "unexpected end of JSON input".
			return fmt.Errorf("%s: %s: not JSON: %s", path, fleet.LineCol(b, se.Offset-1), oneLine(se.Error()))
		}
		// A value of another type where the head's are: the schema
		// check names it.
		return nil
	}
	if h.Tool != "guestcheck freeze-drill" || h.SchemaVersion == nil {
		return fmt.Errorf("%s: not a freeze-drill result (tool %q): write it with guestcheck freeze-drill --output json:%s", path, bounded(oneLine(h.Tool), 40), path)
	}
	if *h.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%s: a freeze-drill result of schema_version %d, and this guestcheck reads %d: run the drill and fleet from the same guestcheck", path, *h.SchemaVersion, SchemaVersion)
	}
	return nil
}

// ResultsMetric is the series that says whether ResultsFile could read
// its file.
const ResultsMetric = "guestcheck_freeze_drill_results_ok"

// ResultsFile serves the last drill's series, read from the JSON file a
// drill wrote, beside another exporter's (guestcheck fleet --listen):
// the drill runs from its own timer, since it writes to guests, and the
// exporter only reads what it left. The file is read again when it
// changed (another file, size or time: the drill replaces it
// atomically), so a scrape costs a stat. A file that is missing or
// invalid serves no drill series, never the last good ones, and
// ResultsMetric 0; Log gets one line each time the file's state changes.
type ResultsFile struct {
	// Path is the drill's JSON result (--output json:PATH).
	Path string
	// Log, when set, gets a line naming the file when it cannot be
	// read, and when it can again; one call at a time.
	Log func(line string)

	mu     sync.Mutex
	fi     os.FileInfo // the file series was rendered from
	series []byte      // the last good read's series, nil after an error
	failed string      // the error last logged
}

// WritePrometheus writes the drill's series, from the file as it is
// now, and ResultsMetric.
func (f *ResultsFile) WritePrometheus(w io.Writer) error {
	f.mu.Lock()
	f.refresh()
	var b bytes.Buffer
	b.Write(f.series)
	ok := f.series != nil
	f.mu.Unlock() // a slow scraper holds up no other
	fmt.Fprintf(&b, "# HELP %s Whether the last freeze drill's result file could be read (1); 0: it is missing or invalid, no drill series are served, and the exporter's log says why.\n# TYPE %s gauge\n%s %s\n",
		ResultsMetric, ResultsMetric, ResultsMetric, bit(ok))
	_, err := w.Write(b.Bytes())
	return err
}

// refresh reads the file again when it is not the one last read.
func (f *ResultsFile) refresh() {
	fi, err := os.Stat(f.Path)
	if err != nil {
		f.fi, f.series = nil, nil
		f.fail(fmt.Errorf("%s: %v", f.Path, fleet.PathErr(err)))
		return
	}
	if f.fi != nil && os.SameFile(fi, f.fi) && fi.Size() == f.fi.Size() && fi.ModTime().Equal(f.fi.ModTime()) {
		return
	}
	r, rfi, err := ReadResult(f.Path)
	// Keyed by the file read, not the one stat saw: if the two differ,
	// the next scrape reads again.
	f.fi, f.series = rfi, nil
	if err != nil {
		f.fail(err)
		return
	}
	var b bytes.Buffer
	if err := WritePrometheus(&b, r); err != nil {
		f.fail(fmt.Errorf("%s: %v", f.Path, err))
		return
	}
	f.series = b.Bytes()
	if f.failed != "" && f.Log != nil {
		f.Log(fmt.Sprintf("%s: read again: the drill of %s, %d VM(s), %s", f.Path, r.StartedAt.UTC().Format(time.RFC3339), len(r.VMs), r.Status))
	}
	f.failed = ""
}

// fail logs err unless it was the last one logged.
func (f *ResultsFile) fail(err error) {
	msg := err.Error()
	if msg == f.failed {
		return
	}
	f.failed = msg
	if f.Log != nil {
		f.Log(msg + "; serving " + ResultsMetric + " 0 and no drill series until the file holds a drill's result")
	}
}
