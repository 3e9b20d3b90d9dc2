package jsonfield

import (
	"strings"
	"testing"
)

func TestFields(t *testing.T) {
	obj, err := Object([]byte(`{"s": "x", "n": null, "i": 3, "o": {"k": "v"}, "l": []}`), "top level")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"s": "x", "n": "", "absent": ""} {
		if got, err := String(obj, key, key); err != nil || got != want {
			t.Errorf("String %s = %q, %v, want %q", key, got, err, want)
		}
	}
	for key, want := range map[string]string{"i": `"i" is a number, want a string`, "l": `"l" is an array, want a string`, "o": `"o" is an object, want a string`} {
		if _, err := String(obj, key, key); err == nil || err.Error() != want {
			t.Errorf("String %s: %v, want %q", key, err, want)
		}
	}
	if o, err := OptObject(obj, "o", "o"); err != nil || len(o) != 1 {
		t.Errorf("OptObject o = %v, %v", o, err)
	}
	if o, err := OptObject(obj, "n", "n"); err != nil || o != nil {
		t.Errorf("OptObject null = %v, %v", o, err)
	}
	if _, err := OptObject(obj, "s", "s"); err == nil || err.Error() != `"s" is a string, want an object` {
		t.Errorf("OptObject s: %v", err)
	}
	for in, want := range map[string]string{
		`[]`:       "top level is an array, want an object",
		`{"a": `:   "unexpected end of JSON input",
		`{"a" 1}`:  "invalid character '1' after object key (at byte 6)",
		"\"\xff\"": "not valid UTF-8 (at byte 1)",
	} {
		if _, err := Object([]byte(in), "top level"); err == nil || err.Error() != want {
			t.Errorf("Object(%q): %v, want %q", in, err, want)
		}
	}
}

func FuzzObject(f *testing.F) {
	for _, s := range []string{`{"a": "b"}`, `{"a": {"b": null}}`, `[1]`, `{"a": `, `"\u00ff"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := Object(b, "top level")
		if err != nil {
			if obj != nil || strings.Contains(err.Error(), "json: ") {
				t.Fatalf("object %v with error %v", obj, err)
			}
			return
		}
		for k := range obj {
			if _, err := String(obj, k, k); err != nil && !strings.HasPrefix(err.Error(), `"`) {
				t.Fatalf("error %q does not name the field", err)
			}
		}
	})
}
