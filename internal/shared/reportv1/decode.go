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

// Decode reads a guestcheck JSON report of schema version 1. Besides the
// JSON types it checks what a reader relies on: the tool, the version,
// and that every status (the run's, each check's and each finding's) is
// one of the five. Fields it does not know are ignored, as the schema's
// additive changes require. Errors are one line without the report's
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
	case full != nil:
		var te *json.UnmarshalTypeError
		if errors.As(full, &te) {
			return r, fmt.Errorf("%s is a JSON %s, not what schema version 1 has there", bounded(te.Field, 80), te.Value)
		}
		return r, fmt.Errorf("not a report of schema version 1: %s", bounded(full.Error(), 160))
	}
	return r, r.Valid()
}

// Valid checks what Decode checks past the JSON types: the statuses of
// r, its checks and their findings, and that every check has an ID.
func (r *Report) Valid() error {
	if !r.Status.Valid() {
		return fmt.Errorf("status %q is not one of schema version 1", bounded(string(r.Status), 40))
	}
	for _, c := range r.Checks {
		if c.ID == "" {
			return errors.New("a check without an id")
		}
		if !c.Status.Valid() {
			return fmt.Errorf("check %q has status %q, not one of schema version 1", bounded(c.ID, 60), bounded(string(c.Status), 40))
		}
		for _, f := range c.Findings {
			if !f.Status.Valid() {
				return fmt.Errorf("check %q has a finding %q with status %q, not one of schema version 1", bounded(c.ID, 60), bounded(f.Code, 60), bounded(string(f.Status), 40))
			}
		}
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
