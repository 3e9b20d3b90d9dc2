package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/shared/runner"
)

// vmDecoder checks and decodes one survey file. reportv1.CheckJSON
// checks the whole file in one pass against SurveyTypes' rules, which
// schema/fleet-v1.schema.json is generated from; then, the file known
// good, the decoder steps over what a merge does not keep (the checks'
// findings, most of a survey's bytes) and hands encoding/json only what
// it compares and counts: each VM without its report, each report
// without its checks, each check without its findings.
type vmDecoder struct {
	file   string
	shared []string
	types  reportv1.Types // SurveyTypes, built once per merge
	seed   maphash.Seed   // the merge's, for segment.sum
	// The objects handed to encoding/json, rebuilt for each VM, report
	// and check.
	scratch, rep, check []byte
}

// surveyHead is what a merge reads of a survey's top level.
type surveyHead struct {
	SchemaVersion *int          `json:"schema_version"`
	Tool          string        `json:"tool"`
	Version       string        `json:"version"`
	Host          string        `json:"host"`
	StartedAt     time.Time     `json:"started_at"`
	Status        Status        `json:"status"`
	SourceErrors  []SourceError `json:"source_errors"`
}

// checkIn is what a merge reads of a report's check.
type checkIn struct {
	ID      string        `json:"id"`
	Status  runner.Status `json:"status"`
	Summary string        `json:"summary"`
}

// check refuses what is not a fleet survey this guestcheck reads, before
// the schema says so at more length.
func (h surveyHead) check(p string) error {
	if h.Tool != "guestcheck fleet" || h.SchemaVersion == nil {
		return fmt.Errorf("%s: not a guestcheck fleet survey (tool %q): merge what guestcheck fleet --format json wrote on each host", p, OneLine(h.Tool, 40))
	}
	if *h.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%s: a fleet survey of schema_version %d, and this guestcheck reads %d: survey with the same guestcheck on every host", p, *h.SchemaVersion, SchemaVersion)
	}
	return nil
}

// decode checks b and reads its head and VMs.
func (d *vmDecoder) decode(b []byte) (surveyHead, []VM, error) {
	var h surveyHead
	if err := reportv1.CheckJSON(b, reflect.TypeFor[Result](), d.types); err != nil {
		return h, nil, d.invalid(b, err)
	}
	top := skipSpace(b, 0)
	var vms []byte
	vmsAt := 0
	d.scratch = append(d.scratch[:0], '{')
	eachMember(b, top, func(key []byte, from int) int {
		to := valueEnd(b, from)
		if keyIs(key, "vms") {
			vms, vmsAt = b[:to], from
		} else {
			d.scratch = appendMember(d.scratch, key, b[from:to])
		}
		return to
	})
	if err := json.Unmarshal(append(d.scratch, '}'), &h); err != nil {
		return h, nil, fmt.Errorf("%s: not a fleet survey: %s", d.file, OneLine(err.Error(), 160))
	}
	if err := h.check(d.file); err != nil {
		return h, nil, err
	}
	var out []VM
	var err error
	eachItem(vms, vmsAt, func(from int) int {
		if err != nil {
			return len(vms)
		}
		var vm VM
		vm, from, err = d.vm(b, from)
		out = append(out, vm)
		return from
	})
	return h, out, err
}

// invalid is CheckJSON's err about b as one line naming the file: a
// document that is no fleet survey of this version is told so first.
func (d *vmDecoder) invalid(b []byte, err error) error {
	var h surveyHead
	var se *json.SyntaxError
	switch jerr := json.Unmarshal(b, &h); {
	case errors.As(jerr, &se):
		// Its Offset is just past the byte at fault.
		return fmt.Errorf("%s: %s: not JSON: %s", d.file, LineCol(b, se.Offset-1), OneLine(se.Error(), 120))
	case h.check(d.file) != nil:
		return h.check(d.file)
	}
	var je *reportv1.JSONError
	if !errors.As(err, &je) {
		return fmt.Errorf("%s: not a valid fleet survey: %v", d.file, err)
	}
	if strings.HasPrefix(je.Msg, "not JSON") {
		return fmt.Errorf("%s: %s: %s", d.file, LineCol(b, int64(je.Offset)), je.Msg)
	}
	return fmt.Errorf("%s: %s: not a valid fleet survey: %s", d.file, LineCol(b, int64(je.Offset)), namedVM(je.Msg, b))
}

// namedVM is CheckJSON's msg about vms[i] with the VM's name, when the
// survey decodes far enough to say it: "vms[3] (web1): status ...".
func namedVM(msg string, b []byte) string {
	rest, ok := strings.CutPrefix(msg, "vms[")
	n, rest, ok2 := strings.Cut(rest, "]")
	i, err := strconv.Atoi(n)
	if !ok || !ok2 || err != nil {
		return msg
	}
	var names struct {
		VMs []struct {
			Name string `json:"name"`
		} `json:"vms"`
	}
	json.Unmarshal(b, &names)
	if i < 0 || i >= len(names.VMs) {
		return msg
	}
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, ":"), ".")
	return fmt.Sprintf("vms[%d] (%s): %s", i, OneLine(names.VMs[i].Name, 80), strings.TrimSpace(rest))
}

// vm is the VM at b[start:], judged afresh: its report's own status
// and worst check (what it shared on its host is compared again). Of
// its report it keeps what a merge compares and counts, and where the
// report's bytes are, for the JSON output to copy them. It returns
// where the VM ends.
func (d *vmDecoder) vm(b []byte, start int) (VM, int, error) {
	var rep reportIn
	obj := append(d.scratch[:0], '{')
	end := eachMember(b, start, func(key []byte, from int) int {
		if keyIs(key, "report") {
			return d.report(b, from, &rep)
		}
		to := valueEnd(b, from)
		obj = appendMember(obj, key, b[from:to])
		return to
	})
	d.scratch = append(obj, '}')
	var vm VM
	err := json.Unmarshal(d.scratch, &vm)
	if err == nil {
		err = rep.err
	}
	if err != nil {
		return VM{}, end, fmt.Errorf("%s: %s: not a fleet survey: %s", d.file, LineCol(b, int64(start)), OneLine(err.Error(), 160))
	}
	vm.Shares = nil
	vm.Reason = OneLine(vm.Reason, 400)
	vm.at = &segment{path: d.file, vm: int64(start)}
	if rep.to == 0 {
		// Unknown on its host, and unknown here: what it shares is not
		// known.
		vm.Status = Unknown
		if vm.Reason == "" {
			vm.Reason = "no report in the survey"
		}
		return vm, end, nil
	}
	vm.Report, vm.Status, vm.Reason = &rep.r, Status(rep.r.Status), worstIn(rep.worst)
	raw := b[rep.from:rep.to]
	vm.at.seed = d.seed
	vm.at.off, vm.at.n, vm.at.sum = int64(rep.from), int64(len(raw)), maphash.Bytes(d.seed, raw)
	return vm, end, nil
}

// reportIn is what a merge reads of a VM's report: the report without
// its checks, the worst check, and where its bytes are.
type reportIn struct {
	r        GuestReport
	worst    checkIn
	from, to int
	err      error
}

// report reads the report at b[from:] into in, the checks one at a
// time without their findings, and returns where it ends.
func (d *vmDecoder) report(b []byte, from int, in *reportIn) int {
	obj := append(d.rep[:0], '{')
	first := true
	in.from = from
	in.to = eachMember(b, from, func(key []byte, from int) int {
		if !keyIs(key, "checks") {
			to := valueEnd(b, from)
			obj = appendMember(obj, key, b[from:to])
			return to
		}
		return eachItem(b, from, func(from int) int {
			var c checkIn
			chk := append(d.check[:0], '{')
			end := eachMember(b, from, func(key []byte, from int) int {
				to := valueEnd(b, from)
				if !keyIs(key, "findings") {
					chk = appendMember(chk, key, b[from:to])
				}
				return to
			})
			d.check = append(chk, '}')
			if err := json.Unmarshal(d.check, &c); err != nil && in.err == nil {
				in.err = err
			}
			if first || c.Status.Worse(in.worst.Status) {
				in.worst, first = c, false
			}
			return end
		})
	})
	d.rep = append(obj, '}')
	if err := json.Unmarshal(d.rep, &in.r); err != nil && in.err == nil {
		in.err = err
	}
	return in.to
}

// LineCol is the line and column of byte offset off in b, for an error
// about a file: "line 3, column 14".
func LineCol(b []byte, off int64) string {
	off = min(max(off, 0), int64(len(b)))
	pre := b[:off]
	line := bytes.Count(pre, []byte("\n")) + 1
	col := int64(len(pre)) - int64(bytes.LastIndexByte(pre, '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

// worstIn is worstCheck's text for a merged report's worst check.
func worstIn(w checkIn) string {
	if w.ID == "" || w.Status == runner.Pass || w.Status == runner.Skip {
		return ""
	}
	return OneLine(w.ID+": "+w.Summary, 200)
}

func appendMember(out, key, val []byte) []byte {
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, key...)
	out = append(out, '"', ':')
	return append(out, val...)
}

// The walk below steps through JSON that CheckJSON has taken, and so
// trusts it.

// eachMember calls fn with each key (as written, without its quotes)
// of the object at b[i] and where its value starts; fn returns where
// the value ends. eachMember returns where the object ends.
func eachMember(b []byte, i int, fn func(key []byte, from int) (to int)) int {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		k := i
		i = stringEnd(b, i)
		key := b[k+1 : i-1]
		i = fn(key, skipSpace(b, skipSpace(b, i)+1))
		if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return i + 1
}

// eachItem calls fn with where each item of the array at b[i]
// starts; fn returns where the item ends. eachItem returns where the
// array ends.
func eachItem(b []byte, i int, fn func(from int) (to int)) int {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		i = fn(i)
		if i = skipSpace(b, i); i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return i + 1
}

// keyIs reports whether key, as written, is name.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	var s string
	return json.Unmarshal([]byte(`"`+string(key)+`"`), &s) == nil && s == name
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd is the end of the JSON value at b[i].
func valueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // a number's or a literal's end
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// stringEnd is the end of the string at b[i], past its closing quote.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		// The quote ends the string unless an odd number of
		// backslashes escapes it.
		n := 0
		for n < i && b[i-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
	}
	return len(b)
}
