package reportv1

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
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
	"mac":         `^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`,
	"cidr":        `^[0-9a-fA-F.:]+/[0-9]{1,3}$`,
	"date":        `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`,
	// datetime is what time.Time's UnmarshalJSON takes in form (RFC
	// 3339); the calendar (a 30 February) it checks itself.
	"datetime": `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}([.,][0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$`,
	// clone is the name sealprep prove gives each clone, and each copy
	// of one (--copy).
	"clone": `^(clone|copy)-[0-9]+$`,
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
	// one-line complaint, "" when it holds. Check gets a pointer to the
	// value; from CheckJSON, a value holding the object's strings,
	// integers and booleans, and for each other key present a non-nil
	// empty value (a pointer to a zero struct, an empty slice or map).
	Cond  string
	Check func(v any) string
}

// Types maps Go types to their rules.
type Types map[reflect.Type]TypeRule

// Type is the reflect.Type of T, for writing Types.
func Type[T any]() reflect.Type { return reflect.TypeFor[T]() }

// With is ts and more, ts left as it was.
func (ts Types) With(more Types) Types {
	out := maps.Clone(ts)
	maps.Copy(out, more)
	return out
}

// Field is one JSON field of a struct type as its json, schema and doc
// tags describe it: what CheckJSON holds a value to, and what the schema
// generator (internal/testenv/schemagen) writes the schemas from, so
// that the schemas say what CheckJSON holds.
type Field struct {
	Index          int
	Type           reflect.Type
	Name           string
	Omit           bool // omitempty: absent when zero
	Req, NonEmpty  bool
	Min            *int64
	MinItems       int
	Const, Pattern string
	Enum           []string
	Doc            string
	match          func(string) bool // Pattern's matcher
}

var fieldCache sync.Map // reflect.Type → []Field

// Fields returns t's JSON fields in order, each parsed once and shared:
// the caller must not change them. A tag it cannot read is a bug in this
// module, so it panics.
func Fields(t reflect.Type) []Field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]Field)
	}
	var fs []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		js := sf.Tag.Get("json")
		if !sf.IsExported() || js == "-" {
			continue
		}
		name, opts, _ := strings.Cut(js, ",")
		f := Field{Index: i, Type: sf.Type, Name: cmp.Or(name, sf.Name), Omit: strings.Contains(opts, "omitempty"), Doc: sf.Tag.Get("doc")}
		for _, kw := range strings.Split(sf.Tag.Get("schema"), ",") {
			k, v, _ := strings.Cut(kw, "=")
			switch k {
			case "":
			case "req":
				f.Req = true
			case "nonempty":
				f.NonEmpty = true
			case "min":
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					panic(fmt.Sprintf("%s.%s: schema tag min=%q", t, sf.Name, v))
				}
				f.Min = &n
			case "minitems":
				f.MinItems, _ = strconv.Atoi(v)
			case "const":
				f.Const = v
			case "enum":
				f.Enum = strings.Split(v, "|")
			case "pattern":
				f.Pattern, f.match = v, matcher(v)
			default:
				panic(fmt.Sprintf("%s.%s: unknown schema tag %q", t, sf.Name, kw))
			}
		}
		fs = append(fs, f)
	}
	fieldCache.Store(t, fs)
	return fs
}

// matcher is the matcher of Patterns[name]; a name without one is a bug
// in this module.
func matcher(name string) func(string) bool {
	m, ok := matchers()[name]
	if !ok {
		panic("reportv1: no pattern " + name)
	}
	return m
}

// Matches reports whether s matches Patterns[name].
func Matches(name, s string) bool { return matcher(name)(s) }

// matchers are Patterns compiled, once.
var matchers = sync.OnceValue(func() map[string]func(string) bool {
	out := map[string]func(string) bool{}
	for name, expr := range Patterns {
		out[name] = regexp.MustCompile(expr).MatchString
	}
	return out
})

func all(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// Check tests v, a document's Go value, against its rules, by the one
// reader of them: its JSON, as v would be written, through CheckJSON.
// The error names the first value that breaks one, by its path in the
// document (checks[2].findings[0].code), in one line.
func Check(v any, types Types) error {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("cannot write the document: %v", err)
	}
	return CheckJSON(b, t, types)
}

var timeType = reflect.TypeFor[time.Time]()

// checkString tests a string field's tag (or, on an array of strings,
// each item's): "" when it holds, else what is wrong, to follow the
// value's path.
func (f Field) checkString(s string) string {
	switch {
	case f.Const != "" && s != f.Const:
		return fmt.Sprintf("is %q, not %q", bounded(s, 40), f.Const)
	case f.Enum != nil && !slices.Contains(f.Enum, s):
		return fmt.Sprintf("%q is not one of %s", bounded(s, 40), strings.Join(f.Enum, ", "))
	case f.NonEmpty && s == "":
		return "is empty"
	case f.Pattern != "" && !f.match(s):
		return fmt.Sprintf("%q does not match %s", bounded(s, 60), Patterns[f.Pattern])
	}
	return ""
}

// checkInt tests an integer field's tag.
func (f Field) checkInt(n int64) string {
	switch {
	case f.Const != "" && strconv.FormatInt(n, 10) != f.Const:
		return fmt.Sprintf("is %d, not %s", n, f.Const)
	case f.Min != nil && n < *f.Min:
		return fmt.Sprintf("is %d, less than %d", n, *f.Min)
	}
	return ""
}

// checkString tests a string type's own rule.
func checkString(s string, rule TypeRule) string {
	if rule.Enum != nil && !slices.Contains(rule.Enum, s) {
		return fmt.Sprintf("%q is not one of %s", bounded(s, 40), strings.Join(rule.Enum, ", "))
	}
	if rule.Pattern != "" && !matcher(rule.Pattern)(s) {
		return fmt.Sprintf("%q does not match %s", bounded(s, 60), Patterns[rule.Pattern])
	}
	return ""
}

// path is where in a document a check is: object keys and array
// indexes, made into text (checks[2].findings[0].code) only for an
// error.
type path []pathSeg

type pathSeg struct {
	key   string
	raw   []byte // a key of a map, as the document has it
	idx   int
	isIdx bool
}

func (p *path) key(k string)    { *p = append(*p, pathSeg{key: k}) }
func (p *path) rawKey(k []byte) { *p = append(*p, pathSeg{raw: k}) }
func (p *path) index(i int)     { *p = append(*p, pathSeg{idx: i, isIdx: true}) }
func (p *path) pop()            { *p = (*p)[:len(*p)-1] }

func (p path) String() string {
	var b strings.Builder
	for _, s := range p {
		if s.raw != nil {
			s.key = string(s.raw)
		}
		switch {
		case s.isIdx:
			fmt.Fprintf(&b, "[%d]", s.idx)
		case b.Len() > 0:
			b.WriteString("." + bounded(s.key, 60))
		default:
			b.WriteString(bounded(s.key, 60))
		}
	}
	return b.String()
}
