package reportv1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"
)

// JSONError is where a document breaks its rules, and how.
type JSONError struct {
	// Offset is the byte offset of the value at fault.
	Offset int
	// Msg names the value by its path (vms[3].report.status) and says
	// what is wrong with it, in one line.
	Msg string
}

// Error is e's message.
func (e *JSONError) Error() string { return e.Msg }

// maxDepth is encoding/json's bound on nesting, so that CheckJSON
// refuses what Decode refuses.
const maxDepth = 10000

// CheckJSON tests the JSON document b against the rules of type t:
// what JSONSchema writes out for t and types, and what Decode and
// Check ask, in one pass over the bytes without decoding them. It
// reads a document as the schema does: a key matches a field's JSON
// name exactly, a key the type does not have is skipped (refused where
// the type's rule is Closed), a required key must be there and null is
// no value of any type. Where the schema and encoding/json part, it
// sides with the decoder: an integer is plain digits (not 1.0) and
// fits 64 bits, a time is one time.Time reads; and it refuses a key the
// type has given twice, which each of them reads as its last, and a
// key that is a field's name in other case, which the schema skips and
// encoding/json reads as the field. Nil, or
// a *JSONError (a syntax error is one too).
func CheckJSON(b []byte, t reflect.Type, types Types) (err error) {
	s := &scanner{b: b, types: types}
	defer func() {
		if r := recover(); r != nil {
			je, ok := r.(*JSONError)
			if !ok {
				panic(r)
			}
			err = je
		}
	}()
	s.ws()
	s.value(t, Field{})
	s.ws()
	if s.i < len(s.b) {
		s.fail(s.i, "", "data after the JSON value")
	}
	return nil
}

// scanner walks a document once; a failure panics with a *JSONError,
// which CheckJSON recovers, so that the walk needs no error plumbing.
type scanner struct {
	b     []byte
	i     int
	depth int
	types Types
	path  path
	plans map[reflect.Type]*plan
}

// plan is what the scanner asks of a struct type's objects, looked up
// once per document.
type plan struct {
	fields []Field
	rule   TypeRule
	judged reflect.Value // rule.Check's value, used again when free
	busy   bool
}

func (s *scanner) plan(t reflect.Type) *plan {
	if p, ok := s.plans[t]; ok {
		return p
	}
	p := &plan{fields: Fields(t), rule: s.types[t]}
	if len(p.fields) > 64 {
		panic(fmt.Sprintf("reportv1: %s has more than 64 fields", t))
	}
	if s.plans == nil {
		s.plans = map[reflect.Type]*plan{}
	}
	s.plans[t] = p
	return p
}

// fail stops the walk at byte off: about is a sentence about the whole
// value at the path, a rule's Check's ("checks[0].findings[2]: a fail
// finding without a remediation"), else msg follows the path
// ("summary.pass is -1, less than 0").
func (s *scanner) fail(off int, msg, about string) {
	switch {
	case about != "" && len(s.path) == 0:
		msg = about
	case about != "":
		msg = s.path.String() + ": " + about
	default:
		msg = s.path.String() + " " + msg
	}
	panic(&JSONError{Offset: off, Msg: bounded(msg, 300)})
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next is the byte at the cursor, or 0 at the end.
func (s *scanner) next() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// kind names the JSON type of the value at the cursor.
func (s *scanner) kind() string {
	switch c := s.next(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == '-' || isDigit(c):
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	s.syntax()
	return ""
}

func (s *scanner) syntax() {
	s.path = nil
	if s.i >= len(s.b) {
		s.fail(s.i, "", "not JSON: unexpected end of input")
	}
	s.fail(s.i, "", fmt.Sprintf("not JSON: unexpected %q", s.b[s.i]))
}

// want refuses the value at the cursor unless it starts with c.
func (s *scanner) want(c byte, name string) {
	if s.next() != c {
		s.fail(s.i, "is "+s.kind()+", not "+name, "")
	}
}

// value checks the value at the cursor, of Go type t in field f, and
// steps past it.
func (s *scanner) value(t reflect.Type, f Field) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem() // null is no value: absent is omitempty's
	}
	switch {
	case t == timeType:
		s.want('"', "a string")
		from := s.i
		s.stringEnd()
		var tm time.Time
		if tm.UnmarshalJSON(s.b[from:s.i]) != nil {
			s.fail(from, fmt.Sprintf("%s is not an RFC 3339 time", bounded(string(s.b[from:s.i]), 60)), "")
		}
	case t.Kind() == reflect.Slice:
		s.array(t, f)
	case t.Kind() == reflect.Map:
		s.object(t, f)
	case t.Kind() == reflect.Struct:
		s.object(t, f)
	case t.Kind() == reflect.String:
		s.str(t, f)
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		s.integer(f)
	case t.Kind() == reflect.Bool:
		switch s.next() {
		case 't':
			s.literal("true")
		case 'f':
			s.literal("false")
		default:
			s.fail(s.i, "is "+s.kind()+", not a boolean", "")
		}
	default:
		panic(fmt.Sprintf("reportv1: CheckJSON of %s", t))
	}
}

func (s *scanner) enter() {
	s.depth++
	if s.depth > maxDepth {
		s.fail(s.i, "", fmt.Sprintf("nested deeper than %d", maxDepth))
	}
}

func (s *scanner) array(t reflect.Type, f Field) {
	start := s.i
	s.want('[', "an array")
	s.i++
	s.enter()
	n := 0
	item := Field{}
	if t.Elem().Kind() == reflect.String {
		item = f // the field's string rules are each item's
	}
	for more := s.open(']'); more; more = s.more(']') {
		s.path.index(n)
		s.value(t.Elem(), item)
		s.path.pop()
		n++
	}
	s.depth--
	if n < f.MinItems {
		s.fail(start, fmt.Sprintf("has %d items, fewer than %d", n, f.MinItems), "")
	}
}

// object checks a struct's or a map's object: a struct's known keys
// once each, the others skipped or refused (Closed), then its required
// keys and its rule's Check; each of a map's values.
func (s *scanner) object(t reflect.Type, f Field) {
	start := s.i
	s.want('{', "an object")
	s.i++
	s.enter()
	var fs []Field
	var rule TypeRule
	var seen uint64
	var cv reflect.Value // what rule.Check judges
	if t.Kind() == reflect.Struct {
		p := s.plan(t)
		fs, rule = p.fields, p.rule
		if rule.Check != nil {
			cv = p.take(t)
			defer func() { p.busy = false }()
		}
	}
	for more := s.open('}'); more; more = s.more('}') {
		keyAt := s.i
		key := s.key()
		if t.Kind() == reflect.Map {
			s.path.rawKey(key)
			s.value(t.Elem(), Field{})
			s.path.pop()
			continue
		}
		i := fieldNamed(fs, key)
		switch {
		case i < 0 && rule.Closed:
			s.fail(keyAt, fmt.Sprintf("has the key %q, which schema version 1 does not have", bounded(string(key), 60)), "")
		case i < 0 && foldsTo(fs, key) != "":
			s.fail(keyAt, fmt.Sprintf("has the key %q, which encoding/json reads as %q", bounded(string(key), 60), foldsTo(fs, key)), "")
		case i < 0:
			s.skip()
			continue
		case seen&(1<<i) != 0:
			s.fail(keyAt, fmt.Sprintf("has the key %q twice", bounded(string(key), 60)), "")
		}
		seen |= 1 << i
		s.path.key(fs[i].Name)
		from := s.i
		s.value(fs[i].Type, fs[i])
		if cv.IsValid() {
			s.set(cv.Field(fs[i].Index), s.b[from:s.i])
		}
		s.path.pop()
	}
	s.depth--
	for i, f := range fs {
		if f.Req && seen&(1<<i) == 0 {
			s.path.key(f.Name)
			s.fail(start, "is missing", "")
		}
	}
	if cv.IsValid() {
		if msg := rule.Check(cv.Addr().Interface()); msg != "" {
			s.fail(start, "", msg)
		}
	}
}

// take is a zero value of t for rule.Check to judge: the plan's own
// when it is free.
func (p *plan) take(t reflect.Type) reflect.Value {
	if p.busy {
		return reflect.New(t).Elem()
	}
	if !p.judged.IsValid() {
		p.judged = reflect.New(t).Elem()
	} else {
		p.judged.SetZero()
	}
	p.busy = true
	return p.judged
}

func fieldNamed(fs []Field, key []byte) int {
	for i := range fs {
		if fs[i].Name == string(key) {
			return i
		}
	}
	return -1
}

// foldsTo is the name of the field key matches when case is ignored,
// as encoding/json matches keys: "" for none.
func foldsTo(fs []Field, key []byte) string {
	for i := range fs {
		if bytes.EqualFold([]byte(fs[i].Name), key) {
			return fs[i].Name
		}
	}
	return ""
}

// set gives v, a field of what a rule's Check judges, the checked
// value raw: a string, integer or boolean as such, anything else as a
// non-nil empty value.
func (s *scanner) set(v reflect.Value, raw []byte) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(string(text(raw)))
	case reflect.Int, reflect.Int64:
		n, _ := strconv.ParseInt(string(raw), 10, 64)
		v.SetInt(n)
	case reflect.Bool:
		v.SetBool(raw[0] == 't')
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
	}
}

// open steps into an object or array just entered, whether a first
// member follows.
func (s *scanner) open(end byte) bool {
	s.ws()
	if s.next() == end {
		s.i++
		return false
	}
	return true
}

// more steps past a member's end: whether another follows.
func (s *scanner) more(end byte) bool {
	s.ws()
	switch s.next() {
	case ',':
		s.i++
		s.ws()
		return true
	case end:
		s.i++
		return false
	}
	s.syntax()
	return false
}

// key reads an object's key and steps past the colon after it: the key
// as text returns it.
func (s *scanner) key() []byte {
	if s.next() != '"' {
		s.syntax()
	}
	from := s.i
	s.stringEnd()
	key := text(s.b[from:s.i])
	s.ws()
	if s.next() != ':' {
		s.syntax()
	}
	s.i++
	s.ws()
	return key
}

// str checks a string of type t in field f.
func (s *scanner) str(t reflect.Type, f Field) {
	start := s.i
	s.want('"', "a string")
	s.stringEnd()
	var rule TypeRule
	if t != stringType {
		rule = s.types[t]
	}
	if f.Const == "" && f.Enum == nil && !f.NonEmpty && f.Pattern == "" && rule.Enum == nil && rule.Pattern == "" {
		return
	}
	v := string(text(s.b[start:s.i]))
	if msg := f.checkString(v); msg != "" {
		s.fail(start, msg, "")
	}
	if msg := checkString(v, rule); msg != "" {
		s.fail(start, msg, "")
	}
}

var stringType = reflect.TypeFor[string]()

// text is raw, a JSON string stringEnd took, as encoding/json reads it:
// a slice of the document unless it holds an escape or bytes that are
// not UTF-8.
func text(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return raw[1 : len(raw)-1]
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		panic("reportv1: text of a string stringEnd took")
	}
	return []byte(v)
}

// stringEnd steps past the string at the cursor. Bytes that are not
// UTF-8 pass, as encoding/json lets them.
func (s *scanner) stringEnd() {
	start := s.i
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !special[c] {
			s.i++
			continue
		}
		switch {
		case c == '"':
			s.i++
			return
		case c == '\\':
			s.escape()
		case c < 0x20:
			s.path = nil
			s.fail(s.i, "", fmt.Sprintf("not JSON: control character %q in a string", c))
		default:
			s.i++
		}
	}
	s.path = nil
	s.fail(start, "", "not JSON: unterminated string")
}

// special are the bytes a string's scan stops at.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func (s *scanner) escape() {
	if s.i+1 < len(s.b) {
		switch s.b[s.i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.i += 2
			return
		case 'u':
			if s.i+6 <= len(s.b) && all(string(s.b[s.i+2:s.i+6]), isHex) {
				s.i += 6
				return
			}
		}
	}
	s.path = nil
	s.fail(s.i, "", "not JSON: a bad escape in a string")
}

// integer checks a number written as plain digits against f; any other
// number is refused, as encoding/json refuses it for an int.
func (s *scanner) integer(f Field) {
	start := s.i
	if c := s.next(); c != '-' && !isDigit(c) {
		s.fail(start, "is "+s.kind()+", not an integer", "")
	}
	s.number()
	v := string(s.b[start:s.i])
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		s.fail(start, fmt.Sprintf("is %s, not an integer of 64 bits written in digits", bounded(v, 40)), "")
	}
	if msg := f.checkInt(n); msg != "" {
		s.fail(start, msg, "")
	}
}

// number steps past a JSON number, as RFC 8259 writes one.
func (s *scanner) number() {
	start := s.i
	if s.next() == '-' {
		s.i++
	}
	switch c := s.next(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		s.path = nil
		s.fail(start, "", "not JSON: a bad number")
	}
	if s.next() == '.' {
		s.i++
		if s.digits() == 0 {
			s.path = nil
			s.fail(start, "", "not JSON: a bad number")
		}
	}
	if c := s.next(); c == 'e' || c == 'E' {
		s.i++
		if c := s.next(); c == '+' || c == '-' {
			s.i++
		}
		if s.digits() == 0 {
			s.path = nil
			s.fail(start, "", "not JSON: a bad number")
		}
	}
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && isDigit(s.b[s.i]) {
		s.i++
		n++
	}
	return n
}

// skip steps past any value, checking only that it is JSON.
func (s *scanner) skip() {
	switch s.next() {
	case '{':
		s.i++
		s.enter()
		for more := s.open('}'); more; more = s.more('}') {
			s.key()
			s.skip()
		}
		s.depth--
	case '[':
		s.i++
		s.enter()
		for more := s.open(']'); more; more = s.more(']') {
			s.skip()
		}
		s.depth--
	case '"':
		s.stringEnd()
	case 't':
		s.literal("true")
	case 'f':
		s.literal("false")
	case 'n':
		s.literal("null")
	default:
		s.number()
	}
}

func (s *scanner) literal(lit string) {
	if string(s.b[s.i:min(len(s.b), s.i+len(lit))]) != lit {
		s.syntax()
	}
	s.i += len(lit)
}
