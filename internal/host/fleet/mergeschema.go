package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/guestcheck/guestcheck/schema"
)

// surveySchema is schema/fleet-v1.schema.json, compiled with the report
// schema it refers to, for checking the surveys a merge reads.
type surveySchema struct{ s *jsonschema.Schema }

// compileSurveySchema compiles the embedded schemas; it runs when a
// merge starts, never at guestcheck's start.
func compileSurveySchema() (surveySchema, error) {
	c := jsonschema.NewCompiler()
	names, err := fs.Glob(schema.Files, "*.schema.json")
	if err != nil {
		return surveySchema{}, err
	}
	for _, n := range names {
		b, err := schema.Files.ReadFile(n)
		if err != nil {
			return surveySchema{}, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return surveySchema{}, fmt.Errorf("built-in schema %s: %v", n, err)
		}
		if err := c.AddResource(schema.Base+n, doc); err != nil {
			return surveySchema{}, fmt.Errorf("built-in schema %s: %v", n, err)
		}
	}
	s, err := c.Compile(schema.Base + "fleet-v1.schema.json")
	if err != nil {
		return surveySchema{}, fmt.Errorf("built-in schema fleet-v1.schema.json: %v", err)
	}
	return surveySchema{s}, nil
}

// check validates b, "" when it is valid, else its most specific error
// in one line: where in the document (a JSON pointer, and the VM's line
// for a VM) and what is wrong.
func (s surveySchema) check(b []byte) string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return oneLine(err.Error(), 160)
	}
	err = s.s.Validate(inst)
	if err == nil {
		return ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return oneLine(err.Error(), 160)
	}
	// The deepest cause is the most specific complaint.
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	at := "/" + strings.Join(ve.InstanceLocation, "/")
	// A leaf's message is its last line, after its location.
	msg := ve.Error()
	msg = msg[strings.LastIndexByte(msg, '\n')+1:]
	if _, m, ok := strings.Cut(msg, "': "); ok {
		msg = m
	}
	return oneLine(vmLine(b, at)+"at "+at+": "+msg, 300)
}

// vmLine is "line N, " for a location inside /vms/I, the line VM I
// starts on.
func vmLine(b []byte, at string) string {
	rest, ok := strings.CutPrefix(at, "/vms/")
	if !ok {
		return ""
	}
	idx, _, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(idx)
	if err != nil {
		return ""
	}
	off := vmOffset(b, i)
	if off < 0 {
		return ""
	}
	l, _, _ := strings.Cut(lineCol(b, off), ",")
	return l + ", "
}

// vmOffset is where VM i of the "vms" array starts, or -1.
func vmOffset(b []byte, i int) int64 {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return -1
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return -1
		}
		if key != "vms" {
			if dec.Decode(&skipped{}) != nil {
				return -1
			}
			continue
		}
		if _, err := dec.Token(); err != nil {
			return -1
		}
		for n := 0; dec.More(); n++ {
			if n == i {
				// Past the comma and the white space before the VM.
				off := dec.InputOffset()
				return off + int64(len(b[off:])-len(bytes.TrimLeft(b[off:], " \t\r\n,")))
			}
			if dec.Decode(&skipped{}) != nil {
				return -1
			}
		}
		return -1
	}
	return -1
}
