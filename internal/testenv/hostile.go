package testenv

import "reflect"

// Hostile holds what a guest, an API or a survey file could send to an
// operator's terminal: CSI and OSC escapes, a bell, NUL, DEL, a C1 CSI,
// NEL, line and paragraph separators, bidi overrides and isolates, line
// breaks and a byte that is not UTF-8. "INJECTED" would start a line of
// its own if a line break got through.
const Hostile = "a\x1b[2Jb\x1b]8;;https://example.com/\x07c\nINJECTED\rd\x00e\x7ff\u0085g\u009b31mh\u2028i\u2029j\u202ek\u2066l\u200fm\xffn\tend"

// FillHostile sets every string v (a pointer) holds, at any depth, to
// Hostile: each slice gets one element, each map one entry (its key
// Hostile too when a string), each nil pointer a value; unexported fields
// are left alone. It returns how many strings it set, so that a test can
// tell they all came back; a field added later is filled without a
// change here.
func FillHostile(v any) int { return fillHostile(reflect.ValueOf(v), 0) }

func fillHostile(v reflect.Value, depth int) int {
	if depth > 12 {
		return 0
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(Hostile)
		return 1
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return fillHostile(v.Elem(), depth+1)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += fillHostile(v.Field(i), depth+1)
			}
		}
		return n
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		return fillHostile(v.Index(0), depth+1)
	case reflect.Map:
		k := reflect.New(v.Type().Key()).Elem()
		e := reflect.New(v.Type().Elem()).Elem()
		n := fillHostile(k, depth+1) + fillHostile(e, depth+1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
		return n
	}
	return 0
}
