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

func TestNumber(t *testing.T) {
	obj, err := Object([]byte(`{"i": 3, "f": -1.5e2, "tiny": 1e-400, "n": null, "s": "1", "big": 1e400}`), "top level")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want float64
		ok   bool
		err  string
	}{
		{"i", 3, true, ""},
		{"f", -150, true, ""},
		{"tiny", 0, true, ""},
		{"n", 0, false, ""},
		{"absent", 0, false, ""},
		{"s", 0, false, `"s" is a string, want a number`},
		{"big", 0, false, `"big" is a number out of range (1e400)`},
	} {
		got, ok, err := Number(obj, tc.key, tc.key)
		if got != tc.want || ok != tc.ok || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("Number %s = %v, %v, %v, want %v, %v, %q", tc.key, got, ok, err, tc.want, tc.ok, tc.err)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{`[]`, []string{}, ""},
		{`["a", "\u00e9"]`, []string{"a", "é"}, ""},
		{`null`, nil, `"l" is null, want an array of strings`},
		{`"a"`, nil, `"l" is a string, want an array of strings`},
		{`{}`, nil, `"l" is an object, want an array of strings`},
		{`["a", 7]`, nil, `"l[1]" is a number, want a string`},
		{`[null]`, nil, `"l[0]" is null, want a string`},
	} {
		got, err := Strings([]byte(tc.in), "l")
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Strings(%s) = %q, %v, want %q, %q", tc.in, got, err, tc.want, tc.err)
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
			_, err1 := String(obj, k, k)
			_, _, err2 := Number(obj, k, k)
			_, err3 := Strings(obj[k], k)
			for _, err := range []error{err1, err2, err3} {
				if err != nil && (!strings.HasPrefix(err.Error(), `"`) || strings.Contains(err.Error(), "json: ")) {
					t.Fatalf("error %q does not name the field", err)
				}
			}
		}
	})
}
