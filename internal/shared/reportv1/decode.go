package reportv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// VersionError is a report of another schema version than this build
// reads.
type VersionError struct{ Got int }

func (e *VersionError) Error() string {
	return fmt.Sprintf("a report of schema_version %d, and this build reads %d", e.Got, SchemaVersion)
}

// Decode reads a guestcheck JSON report of schema version 1: first the
// tool and the version, then every rule of
// schema/report-v1.schema.json on the bytes (CheckJSON). Fields it does not know are ignored, as
// the schema's additive changes require. Errors are one line without the report's
// source, which the caller names; a report that came from a guest is
// hostile, so nothing of it is quoted unbounded.
func Decode(b []byte) (Report, error) {
	var r Report
	if len(bytes.TrimSpace(b)) == 0 {
		return r, errors.New("empty: no report")
	}
	// One pass for a good report; the head alone is read again only to
	// say what a bad one is, the version before the types.
	full := json.Unmarshal(b, &r)
	var head struct {
		SchemaVersion *int   `json:"schema_version"`
		Tool          string `json:"tool"`
	}
	if full == nil {
		// No version is 0: a missing schema_version decodes as one.
		if r.SchemaVersion != 0 {
			head.SchemaVersion = &r.SchemaVersion
		}
		head.Tool = r.Tool
	} else if err := json.Unmarshal(b, &head); err != nil {
		return r, fmt.Errorf("not a JSON report: %s", bounded(err.Error(), 160))
	}
	switch {
	case head.Tool != Tool || head.SchemaVersion == nil:
		return r, fmt.Errorf("not a guestcheck report (tool %q)", bounded(head.Tool, 40))
	case *head.SchemaVersion != SchemaVersion:
		return r, &VersionError{Got: *head.SchemaVersion}
	}
	// The schema's reading of the bytes: required keys, no nulls, the
	// types, and every rule Valid checks again on the values.
	if err := CheckJSON(b, Type[Report](), ReportTypes); err != nil {
		return r, err
	}
	switch {
	case full != nil:
		var te *json.UnmarshalTypeError
		if errors.As(full, &te) {
			return r, fmt.Errorf("%s is a JSON %s, not what schema version 1 has there", bounded(te.Field, 80), te.Value)
		}
		return r, fmt.Errorf("not a report of schema version 1: %s", bounded(full.Error(), 160))
	}
	return r, nil
}

// ReportTypes are the rules of the report's types beyond their fields'
// tags, for Check and JSONSchema.
var ReportTypes = Types{
	Type[Status]():   {Def: "status", Enum: []string{"pass", "warn", "fail", "skip", "error"}},
	Type[Identity](): {Def: "identity", Desc: "the guest's identity items, for comparing VMs (guestcheck fleet, sealprep prove): present on every guestcheck run, under --root too; empty fields were not found, unread says what could not be read"},
	Type[Waived]():   {Def: "waived", Closed: true, Desc: "present when a configuration waiver accepts the finding: it keeps its status but counts as a pass towards its check's status and the exit code"},
	Type[Finding](): {
		Cond: `{"if": {"properties": {"status": {"enum": ["warn", "fail", "error"]}}},
			"then": {"required": ["remediation"], "properties": {"remediation": {"minLength": 1}}}}`,
		Check: func(v any) string {
			// A finding that is not a pass or a skip says how to fix it.
			if f := v.(*Finding); f.Remediation == "" && (f.Status == Warn || f.Status == Fail || f.Status == Error) {
				return "a " + string(f.Status) + " finding without a remediation"
			}
			return ""
		}},
}

// UnmarshalJSON reads w refusing keys it does not have: the schema
// closes the waiver, so that a misspelt "expire" is not a waiver that
// never expires.
func (w *Waived) UnmarshalJSON(b []byte) error {
	type plain Waived
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode((*plain)(w)); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field") {
			return fmt.Errorf("waived has the key %s, which schema version 1 does not have", bounded(strings.TrimPrefix(err.Error(), "json: unknown field "), 60))
		}
		return err
	}
	return nil
}

// bounded is s on one line and at most n bytes long (cut at a rune).
func bounded(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
