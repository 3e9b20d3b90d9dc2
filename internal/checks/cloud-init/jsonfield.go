package cloudinit

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The helpers below walk a document decoded into `any` and enforce the
// type of each field guestcheck uses, naming the field on error. Unknown
// keys are ignored so that newer cloud-init releases still parse.

// decodeObject decodes b and requires a JSON object at the top level.
// Invalid UTF-8 is refused, as cloud-init's own reading of the file
// (util.load_file decodes it as UTF-8) refuses it; encoding/json would
// quietly replace it with U+FFFD. cloud-init writes these files as ASCII,
// so such bytes mean the file is damaged.
func decodeObject(b []byte) (map[string]any, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("not valid UTF-8 (at byte %d)", invalidUTF8At(b))
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, jsonError(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, typeError("top level", "an object", v)
	}
	return m, nil
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

// jsonError keeps encoding/json's wording (so "unexpected end of JSON
// input" reads as users expect) and adds the byte offset of a syntax error
// that is not simply truncation.
func jsonError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Error() != "unexpected end of JSON input" {
		return fmt.Errorf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return err
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func typeError(field, want string, v any) error {
	return fmt.Errorf("%s: want %s, got %s", field, want, jsonType(v))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// optObject returns m[key] as an object; absent yields nil. null is
// accepted only when nullable.
func optObject(m map[string]any, key, path string, nullable bool) (map[string]any, error) {
	v, ok := m[key]
	if !ok || (v == nil && nullable) {
		return nil, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, typeError(join(path, key), "an object", v)
	}
	return o, nil
}

// optString returns m[key] as a string; absent and null yield "".
func optString(m map[string]any, key, path string) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", typeError(join(path, key), "a string or null", v)
	}
	return s, nil
}

// optNumber returns m[key] as a number; absent and null yield ok=false.
func optNumber(m map[string]any, key, path string) (float64, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, ok := v.(float64)
	if !ok {
		return 0, false, typeError(join(path, key), "a number or null", v)
	}
	return f, true, nil
}

// stringList returns m[key] as a list of strings; absent yields nil.
// null is refused: cloud-init itself would crash extending a list with it.
func stringList(m map[string]any, key, path string) ([]string, error) {
	v, ok := m[key]
	if !ok {
		return nil, nil
	}
	return asStringList(v, join(path, key))
}

func asStringList(v any, field string) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, typeError(field, "an array of strings", v)
	}
	out := make([]string, 0, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok {
			return nil, typeError(fmt.Sprintf("%s[%d]", field, i), "a string", e)
		}
		out = append(out, s)
	}
	return out, nil
}
