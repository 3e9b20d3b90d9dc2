// Package clean makes text from outside guestcheck safe to show.
package clean

import (
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text in a report may come from what guestcheck does not control: a
// guest image's files under --root, a guest's report read by guestcheck
// fleet, another host's survey. What a person reads shows it cleaned,
// so that no such string puts escape sequences, line breaks or
// reordered text on an operator's terminal, a log or a dashboard: the
// text report after Clean, Nagios and TAP lines and Prometheus labels
// through Text and Rune, and every output of guestcheck fleet
// after Clean.

// Text is s safe to show: valid UTF-8 (invalid bytes become
// U+FFFD), line breaks and tabs a space, and every other control
// character (C0, DEL, C1, which includes the 8-bit CSI) and every bidi
// override or isolate (which would reorder what a terminal shows) U+FFFD,
// so that tampering stays visible.
func Text(s string) string {
	if IsClean(s) {
		return s
	}
	return strings.Map(Rune, strings.ToValidUTF8(s, "\uFFFD"))
}

// IsClean is whether Text would leave s as it is.
func IsClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			// Past ASCII: decode the rest.
			if !utf8.ValidString(s[i:]) {
				return false
			}
			for _, r := range s[i:] {
				if Rune(r) != r {
					return false
				}
			}
			return true
		}
	}
	return true
}

// Rune is r as Text shows it.
func Rune(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
		return ' '
	case unicode.IsControl(r) || IsBidi(r):
		return '\uFFFD'
	}
	return r
}

// IsBidi is whether r is a bidirectional formatting character: the
// marks, embeddings, overrides and isolates of Unicode's bidi algorithm
// ("Trojan Source").
func IsBidi(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// Value is v with every string in it, at any depth, Text'd: struct
// fields, slices, maps (keys too) and what pointers point to. Found by
// reflection, so that a field added later is cleaned too. Only what
// changes is copied: v and what it points to are never written, since
// a result is rendered more than once, and under guestcheck fleet
// --listen while scrapes read it.
func Value[T any](v T) T {
	out, changed := cleanValue(reflect.ValueOf(&v).Elem())
	if !changed {
		return v
	}
	return out.Interface().(T)
}

// cleanValue returns v with its strings cleaned, and whether any
// changed; when none did it is v itself. Unexported fields are kept as
// they are: they hold positions and flags, not text.
func cleanValue(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if IsClean(s) {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(Text(s))
		return out, true
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := cleanValue(v.Elem())
		if !changed {
			return v, false
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(e)
		return p, true
	case reflect.Struct:
		var out reflect.Value
		t := v.Type()
		for i := range t.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			f, changed := cleanValue(v.Field(i))
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(t).Elem()
				out.Set(v)
			}
			out.Field(i).Set(f)
		}
		if !out.IsValid() {
			return v, false
		}
		return out, true
	case reflect.Slice, reflect.Array:
		var out reflect.Value
		for i := range v.Len() {
			e, changed := cleanValue(v.Index(i))
			if !changed {
				continue
			}
			if !out.IsValid() {
				if v.Kind() == reflect.Slice {
					out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
				} else {
					out = reflect.New(v.Type()).Elem()
				}
				reflect.Copy(out, v)
			}
			out.Index(i).Set(e)
		}
		if !out.IsValid() {
			return v, false
		}
		return out, true
	case reflect.Map:
		changed := false
		for it := v.MapRange(); it.Next() && !changed; {
			_, kc := cleanValue(it.Key())
			_, vc := cleanValue(it.Value())
			changed = kc || vc
		}
		if !changed {
			return v, false
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, _ := cleanValue(it.Key())
			e, _ := cleanValue(it.Value())
			out.SetMapIndex(k, e)
		}
		return out, true
	}
	return v, false
}
