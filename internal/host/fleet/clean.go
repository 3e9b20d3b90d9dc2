package fleet

import (
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every string of a survey came from somewhere guestcheck does not
// control: a guest's report, its agent, a hypervisor's or a cluster's
// API, another host's survey file. Each renderer writes the Result it is
// given only after cleanResult, so that no such string can put escape
// sequences, line breaks or reordered text on an operator's terminal, a
// log or a dashboard, whichever field it arrives in and whichever output
// form (text, JSON, JUnit, Prometheus) carries it.

// CleanText is s safe to show: valid UTF-8 (invalid bytes become
// U+FFFD), line breaks and tabs a space, and every other control
// character (C0, DEL, C1, which includes the 8-bit CSI) and every bidi
// override or isolate (which would reorder what a terminal shows) U+FFFD,
// so that tampering stays visible.
func CleanText(s string) string {
	if isClean(s) {
		return s
	}
	return strings.Map(cleanRune, strings.ToValidUTF8(s, "\uFFFD"))
}

// isClean is whether CleanText would leave s as it is.
func isClean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			// Past ASCII: decode the rest.
			if !utf8.ValidString(s[i:]) {
				return false
			}
			for _, r := range s[i:] {
				if cleanRune(r) != r {
					return false
				}
			}
			return true
		}
	}
	return true
}

// cleanRune is r as CleanText shows it.
func cleanRune(r rune) rune {
	switch {
	case r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029:
		return ' '
	case unicode.IsControl(r) || isBidi(r):
		return '\uFFFD'
	}
	return r
}

// isBidi is whether r is a bidirectional formatting character: the
// marks, embeddings, overrides and isolates of Unicode's bidi algorithm
// ("Trojan Source").
func isBidi(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// cleanResult is r with every string in it, at any depth, CleanText'd:
// names, reasons, source errors, collisions, every VM's report. Found by
// reflection, so that a field added later is cleaned too. Only what
// changes is copied: r and what it points to are never written, since a
// survey is rendered more than once, and under --listen while scrapes
// read it.
func cleanResult(r Result) Result {
	v, changed := cleanValue(reflect.ValueOf(r))
	if !changed {
		return r
	}
	return v.Interface().(Result)
}

// cleanVM is cleanResult for one VM, whose report a merge reads again
// from its file only while it is rendered.
func cleanVM(vm VM) VM {
	v, changed := cleanValue(reflect.ValueOf(vm))
	if !changed {
		return vm
	}
	return v.Interface().(VM)
}

// cleanValue returns v with its strings cleaned, and whether any
// changed; when none did it is v itself. Unexported fields are kept as
// they are: they hold positions and flags, not text.
func cleanValue(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if isClean(s) {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(CleanText(s))
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

// cleanJSON is whether b, a report as a survey file holds it, may be
// copied into JSON output as it is: valid UTF-8, no escape but \" \\ and
// \/ (encoding/json writes every control character, U+2028 and U+2029
// as one), and no character CleanText would change.
func cleanJSON(b []byte) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\\':
			if i+1 >= len(b) || !strings.ContainsRune(`"\/`, rune(b[i+1])) {
				return false
			}
			i++
		case c >= 0x80:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 || cleanRune(r) != r {
				return false
			}
			i += n - 1
		}
	}
	return true
}
