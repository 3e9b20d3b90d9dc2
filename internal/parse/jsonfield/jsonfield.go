// Package jsonfield reads the fields guestcheck needs from the small JSON
// files cloud-init writes (instance-data.json, set-hostname), enforcing
// each field's type and naming the field in errors in a user's words
// rather than encoding/json's Go types. Unknown keys are ignored so that
// newer cloud-init releases still parse. Everything here is pure.
package jsonfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
