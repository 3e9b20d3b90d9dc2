// Package jsonfield reads the fields guestcheck needs from the small JSON
// files cloud-init writes (instance-data.json, set-hostname, status.json,
// result.json), enforcing
// each field's type and naming the field in errors in a user's words
// rather than encoding/json's Go types. Unknown keys are ignored so that
// newer cloud-init releases still parse. Everything here is pure.
package jsonfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Object decodes b as a JSON object; what names it in errors ("top level"
// for a whole document). Invalid UTF-8 is refused at the top level, as
// cloud-init's own reading of the file (util.load_file decodes it as
// UTF-8) refuses it, where encoding/json would quietly replace it.
func Object(b []byte, what string) (map[string]json.RawMessage, error) {
	if what == "top level" && !utf8.Valid(b) {
		return nil, fmt.Errorf("not valid UTF-8 (at byte %d)", invalidUTF8At(b))
	}
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, jsonError(err)
	}
	if k := Kind(raw); k != "an object" {
		if what == "top level" {
			return nil, fmt.Errorf("top level is %s, want an object", k)
		}
		return nil, fmt.Errorf("%q is %s, want an object", what, k)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, jsonError(err)
	}
	return obj, nil
}

// OptObject returns obj[key] as an object, named field in errors; absent
// and null give nil.
func OptObject(obj map[string]json.RawMessage, key, field string) (map[string]json.RawMessage, error) {
	raw, ok := obj[key]
	if !ok || Kind(raw) == "null" {
		return nil, nil
	}
	return Object(raw, field)
}

// String returns obj[key] as a string, named field in errors; absent and
// null give "".
func String(obj map[string]json.RawMessage, key, field string) (string, error) {
	raw, ok := obj[key]
	if !ok {
		return "", nil
	}
	switch k := Kind(raw); k {
	case "null":
		return "", nil
	case "a string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%q: %w", field, jsonError(err))
		}
		return s, nil
	default:
		return "", fmt.Errorf("%q is %s, want a string", field, k)
	}
}

// Number returns obj[key] as a number, named field in errors; absent and
// null give ok=false. A number too large for a float64 is refused rather
// than read as infinity, as encoding/json refuses it.
func Number(obj map[string]json.RawMessage, key, field string) (f float64, ok bool, err error) {
	raw, ok := obj[key]
	if !ok {
		return 0, false, nil
	}
	switch k := Kind(raw); k {
	case "null":
		return 0, false, nil
	case "a number":
		t := bytes.TrimSpace(raw)
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return 0, false, fmt.Errorf("%q is a number out of range (%s)", field, clip(string(t), 40))
		}
		return f, true, nil
	default:
		return 0, false, fmt.Errorf("%q is %s, want a number", field, k)
	}
}

// Strings returns raw as an array of strings, named field in errors and
// each element as field[i]. Unlike String's, null is refused here: the
// caller decides whether an absent key is an empty list.
func Strings(raw json.RawMessage, field string) ([]string, error) {
	if k := Kind(raw); k != "an array" {
		return nil, fmt.Errorf("%q is %s, want an array of strings", field, k)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%q: %w", field, jsonError(err))
	}
	out := make([]string, 0, len(elems))
	for i, e := range elems {
		elem := fmt.Sprintf("%s[%d]", field, i)
		if k := Kind(e); k != "a string" {
			return nil, fmt.Errorf("%q is %s, want a string", elem, k)
		}
		var s string
		if err := json.Unmarshal(e, &s); err != nil {
			return nil, fmt.Errorf("%q: %w", elem, jsonError(err))
		}
		out = append(out, s)
	}
	return out, nil
}

// Kind names the JSON type of a valid raw value, with its article.
func Kind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "empty"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonError drops encoding/json's Go type names, which mean nothing to
// someone looking at a cloud-init file, and adds the offset of a syntax
// error that is not simply truncation.
func jsonError(err error) error {
	var se *json.SyntaxError
	// At the end of input the offset is just the file size.
	if errors.As(err, &se) && se.Error() != "unexpected end of JSON input" {
		return fmt.Errorf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// invalidUTF8At returns the offset of the first byte of b that does not
// start a valid UTF-8 sequence.
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// clip shortens s for an error message: a number can be as long as the
// file.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
