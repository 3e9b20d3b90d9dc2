package reportv1

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The rules of the JSON documents beyond their Go types are written
// once, as a `schema` tag on each field and a TypeRule for each type
// with rules of its own. Check enforces them on decoded values, and
// JSONSchema writes them out as the schema/*.schema.json files, so the
// schema a document is documented by and the check a reader applies
// cannot drift apart.
//
// A field's schema tag is a comma-separated list of:
//
//	req          the key is always written (the schema's "required")
//	nonempty     a string of at least one character
//	min=N        an integer of at least N
//	minitems=N   an array of at least N items
//	const=V      a string or integer that is always V
//	pattern=NAME a string matching Patterns[NAME]
//	enum=A|B     a string that is one of A, B
//
// On an array of strings, nonempty, pattern and enum ask it of each
// item,
// and its `doc` tag is its description in the schema.

// Patterns are the regular expressions a schema tag names. They are
// written in the common subset of RE2 and ECMA-262 that JSON Schema
// validators use.
var Patterns = map[string]string{
	"kebab":       `^[a-z0-9]+(-[a-z0-9]+)*$`,
	"hex32":       `^[0-9a-f]{32}$`,
	"fingerprint": `^SHA256:[A-Za-z0-9+/]{43}$`,
	"hexbytes":    `^[0-9a-f]{2}(:[0-9a-f]{2})*$`,
	"cidr":        `^[0-9a-fA-F.:]+/[0-9]{1,3}$`,
	"date":        `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`,
	// datetime is what time.Time's UnmarshalJSON takes in form (RFC
	// 3339); the calendar (a 30 February) it checks itself.
	"datetime": `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`,
}

// TypeRule is what a JSON document asks of every value of one Go type
// beyond its fields' tags.
type TypeRule struct {
	// Def names the type under the schema's $defs; "" writes it in
	// place.
	Def string
	// Ref, if set, is the schema the type is described by in another
	// file ("report-v1.schema.json#/$defs/identity"): the generator
	// refers to it, Check still checks the value.
	Ref string
	// Desc is the schema's description of the type.
	Desc string
	// Enum lists the values a string type may take.
	Enum []string
	// Pattern names a Patterns entry every value of a string type
	// matches.
	Pattern string
	// Closed refuses keys the type does not have (additionalProperties
	// false); its UnmarshalJSON must refuse them too.
	Closed bool
	// Cond is what the object's keys ask of each other, as JSON Schema
	// keywords (if/then/else, allOf), and Check the same rule in Go: a
	// one-line complaint, "" when it holds.
	Cond  string
	Check func(v any) string
}

// Types maps Go types to their rules.
type Types map[reflect.Type]TypeRule

// Type is the reflect.Type of T, for writing Types.
func Type[T any]() reflect.Type { return reflect.TypeFor[T]() }

// With is ts and more, ts left as it was.
func (ts Types) With(more Types) Types {
	out := make(Types, len(ts)+len(more))
	for k, v := range ts {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// field is one JSON field of a struct, its tag parsed.
type field struct {
	index    int
	name     string
	omit     bool // omitempty: absent when zero
	req      bool
	nonEmpty bool
	min      *int64
	minItems int
	konst    string
	enum     []string
	pattern  string
	re       *regexp.Regexp
	doc      string
}

var (
	fieldCache sync.Map // reflect.Type → []field
	reCache    sync.Map // pattern name → *regexp.Regexp
)

// fieldsOf parses t's JSON fields once; a tag it cannot read is a bug
// in this module, so it panics.
func fieldsOf(t reflect.Type) []field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := range t.NumField() {
		sf := t.Field(i)
		js := sf.Tag.Get("json")
		if !sf.IsExported() || js == "-" {
			continue
		}
		name, opts, _ := strings.Cut(js, ",")
		f := field{index: i, name: cmpOr(name, sf.Name), omit: strings.Contains(opts, "omitempty"), doc: sf.Tag.Get("doc")}
		for _, kw := range strings.Split(sf.Tag.Get("schema"), ",") {
			k, v, _ := strings.Cut(kw, "=")
			switch k {
			case "":
			case "req":
				f.req = true
			case "nonempty":
				f.nonEmpty = true
			case "min":
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					panic(fmt.Sprintf("%s.%s: schema tag min=%q", t, sf.Name, v))
				}
				f.min = &n
			case "minitems":
				f.minItems, _ = strconv.Atoi(v)
			case "const":
				f.konst = v
			case "enum":
				f.enum = strings.Split(v, "|")
			case "pattern":
				f.pattern, f.re = v, compiled(v)
			default:
				panic(fmt.Sprintf("%s.%s: unknown schema tag %q", t, sf.Name, kw))
			}
		}
		fs = append(fs, f)
	}
	fieldCache.Store(t, fs)
	return fs
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func compiled(name string) *regexp.Regexp {
	if re, ok := reCache.Load(name); ok {
		return re.(*regexp.Regexp)
	}
	text, ok := Patterns[name]
	if !ok {
		panic("reportv1: no pattern " + name)
	}
	re := regexp.MustCompile(text)
	reCache.Store(name, re)
	return re
}

// Check tests v, a decoded document, against its rules: its fields'
// schema tags and the rules types gives its types. The error names
// the first value that breaks one, by its path in the document
// (checks[2].findings[0].code), in one line.
func Check(v any, types Types) error {
	return check(reflect.ValueOf(v), types, "")
}

var timeType = reflect.TypeFor[time.Time]()

func check(v reflect.Value, types Types, at string) error {
	t := v.Type()
	rule := types[t]
	switch {
	case t == timeType:
		return nil
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return check(v.Elem(), types, at)
	case t.Kind() == reflect.Slice:
		for i := range v.Len() {
			if err := check(v.Index(i), types, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	case t.Kind() == reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if err := check(it.Value(), types, join(at, it.Key().String())); err != nil {
				return err
			}
		}
		return nil
	case t.Kind() == reflect.String:
		return checkString(v.String(), rule, at)
	case t.Kind() != reflect.Struct:
		return nil
	}
	for _, f := range fieldsOf(t) {
		if err := checkField(v.Field(f.index), f, types, join(at, f.name)); err != nil {
			return err
		}
	}
	if rule.Check != nil {
		if msg := rule.Check(v.Interface()); msg != "" {
			if at == "" {
				return errors.New(msg)
			}
			return fmt.Errorf("%s: %s", at, msg)
		}
	}
	return nil
}

// checkField tests one field's tag, then its value's own rules. An
// omitempty field at its zero value is absent and so asks nothing.
func checkField(v reflect.Value, f field, types Types, at string) error {
	if f.omit && v.IsZero() {
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		if err := f.checkString(v.String(), at); err != nil {
			return err
		}
	case reflect.Int, reflect.Int64:
		n := v.Int()
		switch {
		case f.konst != "" && strconv.FormatInt(n, 10) != f.konst:
			return fmt.Errorf("%s is %d, not %s", at, n, f.konst)
		case f.min != nil && n < *f.min:
			return fmt.Errorf("%s is %d, less than %d", at, n, *f.min)
		}
	case reflect.Slice:
		if v.IsNil() && f.req {
			return fmt.Errorf("%s is missing, or not an array", at)
		}
		if v.Len() < f.minItems {
			return fmt.Errorf("%s has %d items, fewer than %d", at, v.Len(), f.minItems)
		}
		if v.Type().Elem().Kind() == reflect.String {
			for i := range v.Len() {
				if err := f.checkString(v.Index(i).String(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return check(v, types, at)
}

// checkString tests a string field's tag (or, on an array of strings,
// each item's).
func (f field) checkString(s, at string) error {
	switch {
	case f.konst != "" && s != f.konst:
		return fmt.Errorf("%s is %q, not %q", at, bounded(s, 40), f.konst)
	case f.enum != nil && !contains(f.enum, s):
		return fmt.Errorf("%s %q is not one of %s", at, bounded(s, 40), strings.Join(f.enum, ", "))
	case f.nonEmpty && s == "":
		return fmt.Errorf("%s is empty", at)
	case f.re != nil && !f.re.MatchString(s):
		return fmt.Errorf("%s %q does not match %s", at, bounded(s, 60), f.re)
	}
	return nil
}

func checkString(s string, rule TypeRule, at string) error {
	if rule.Enum != nil && !contains(rule.Enum, s) {
		return fmt.Errorf("%s %q is not one of %s", at, bounded(s, 40), strings.Join(rule.Enum, ", "))
	}
	if rule.Pattern != "" && !compiled(rule.Pattern).MatchString(s) {
		return fmt.Errorf("%s %q does not match %s", at, bounded(s, 60), Patterns[rule.Pattern])
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
