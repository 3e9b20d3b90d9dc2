package reportv1

import (
	"fmt"
	"strconv"
	"strings"
)

// Type is the JSON type a Shape wants.
type Type uint8

// The types a Shape may want. One is the JSON number 1, the only
// number-valued const the schemas have (schema_version).
const (
	Object Type = iota + 1
	Array
	String
	Integer
	One
)

// Shape is what a JSON schema asks of one value, as much of JSON Schema
// as guestcheck's own schemas use: Check tests a document of tens of
// MiB against it in one pass over its bytes, where a general validator
// first decodes it into a tree. The schema files stay the definition:
// the tests hold a Shape to its schema with a JSON Schema validator.
//
// Check may refuse what the schema allows, never the other way round:
// it refuses a known key given twice (the schema sees the last one) and
// an integer not written as plain digits (1.0, 1e2, -0), which a caller
// that must agree with the schema exactly hands to the schema's
// validator.
type Shape struct {
	Type Type
	// Enum lists the strings a String may be; a const is one.
	Enum []string
	// NonEmpty is minLength 1, the only minLength the schemas use.
	NonEmpty bool
	// Pattern, if set, is a String's pattern.
	Pattern *Pattern
	// Minimum bounds an Integer.
	Minimum int64
	// Items is each item's shape, MinItems their least number.
	Items    *Shape
	MinItems int
	// Props are an Object's known keys; Values, if set, is every other
	// key's value (additionalProperties), and Closed forbids other keys.
	Props  []Prop
	Values *Shape
	Closed bool
	// Cond is what an Object's keys ask of each other (if, then, else),
	// a message when they do not hold; it runs once every key is known
	// good.
	Cond func(*Fields) string
}

// Prop is one known key of an object.
type Prop struct {
	Name     string
	Shape    *Shape
	Required bool
}

// Pattern is a schema's pattern, as its text and as a hand-written
// matcher: every pattern the schemas use is a few character classes.
type Pattern struct {
	Text  string
	Match func([]byte) bool
}

// maxProps bounds an object shape's known keys, whose presence is a
// bit mask and whose values' spans Fields keeps on the stack.
const maxProps = 16

// maxDepth bounds nesting, far below encoding/json's 10000: deeper
// documents are no report guestcheck writes.
const maxDepth = 200

// SchemaError is where a document breaks its Shape, and how.
type SchemaError struct {
	// Offset is the byte offset of the value at fault.
	Offset int
	// Pointer is the value's JSON pointer.
	Pointer string
	Msg     string
}

func (e *SchemaError) Error() string { return "at " + e.Pointer + ": " + e.Msg }

// Check tests the JSON document b against sh: nil, or the first
// *SchemaError (a syntax error too is one).
func Check(b []byte, sh *Shape) (err error) {
	s := &scanner{b: b}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(*SchemaError)
			if !ok {
				panic(r)
			}
			err = se
		}
	}()
	s.ws()
	s.value(sh)
	s.ws()
	if s.i < len(s.b) {
		s.failAt(s.i, "data after the JSON value")
	}
	return nil
}

// scanner walks a document once; a failure panics with a *SchemaError
// that Check recovers, so that the walk needs no error plumbing.
type scanner struct {
	b     []byte
	i     int
	depth int
	path  []pathSeg
}

// pathSeg is one step of the JSON pointer: a key, or an index when key
// is nil.
type pathSeg struct {
	key []byte
	idx int
}

// Fields are the keys an object holds, for its Shape's Cond.
type Fields struct {
	sh   *Shape
	b    []byte
	seen uint32
	span [maxProps][2]int32
}

// Has says whether the object holds key name.
func (f *Fields) Has(name string) bool {
	i := f.sh.propNamed(name)
	return i >= 0 && f.seen&(1<<i) != 0
}

// Str is the value of key name when it is a string the object holds,
// escapes resolved as far as a schema's ASCII enums and patterns need.
func (f *Fields) Str(name string) string {
	i := f.sh.propNamed(name)
	if i < 0 || f.seen&(1<<i) == 0 {
		return ""
	}
	v := f.b[f.span[i][0]:f.span[i][1]]
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	return string(unescape(v[1 : len(v)-1]))
}

func (sh *Shape) propNamed(name string) int {
	for i := range sh.Props {
		if sh.Props[i].Name == name {
			return i
		}
	}
	return -1
}

func (sh *Shape) prop(key []byte) int {
	for i := range sh.Props {
		if sh.Props[i].Name == string(key) {
			return i
		}
	}
	return -1
}

func (s *scanner) failAt(off int, format string, args ...any) {
	var p strings.Builder
	for _, seg := range s.path {
		p.WriteByte('/')
		if seg.key == nil {
			p.WriteString(strconv.Itoa(seg.idx))
			continue
		}
		k := strings.ReplaceAll(string(seg.key), "~", "~0")
		p.WriteString(strings.ReplaceAll(k, "/", "~1"))
	}
	panic(&SchemaError{Offset: off, Pointer: p.String(), Msg: bounded(fmt.Sprintf(format, args...), 200)})
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
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	}
	s.syntax()
	return ""
}

func (s *scanner) syntax() {
	if s.i >= len(s.b) {
		s.failAt(s.i, "not JSON: unexpected end of input")
	}
	s.failAt(s.i, "not JSON: unexpected %q", s.b[s.i])
}

// value checks the value at the cursor against sh and steps past it.
func (s *scanner) value(sh *Shape) {
	want := ""
	switch sh.Type {
	case Object:
		if s.next() == '{' {
			s.object(sh)
			return
		}
		want = "object"
	case Array:
		if s.next() == '[' {
			s.array(sh)
			return
		}
		want = "array"
	case String:
		if s.next() == '"' {
			s.str(sh)
			return
		}
		want = "string"
	case Integer, One:
		if c := s.next(); c == '-' || c >= '0' && c <= '9' {
			s.integer(sh)
			return
		}
		want = "integer"
	default:
		s.skip()
		return
	}
	s.failAt(s.i, "got %s, want %s", s.kind(), want)
}

func (s *scanner) enter() int {
	s.depth++
	if s.depth > maxDepth {
		s.failAt(s.i, "nested deeper than %d", maxDepth)
	}
	s.path = append(s.path, pathSeg{})
	return len(s.path) - 1
}

func (s *scanner) leave(top int) {
	s.depth--
	s.path = s.path[:top]
}

// object checks an object: its known keys once each, the others by
// Values or Closed, then what is required and Cond.
func (s *scanner) object(sh *Shape) {
	start := s.i
	s.i++
	top := s.enter()
	f := Fields{sh: sh, b: s.b}
	for more := s.open('}'); more; more = s.more('}') {
		keyAt := s.i
		key := s.key()
		s.path[top] = pathSeg{key: key}
		s.ws()
		if s.next() != ':' {
			s.syntax()
		}
		s.i++
		s.ws()
		i := sh.prop(key)
		switch {
		case i >= 0:
			if f.seen&(1<<i) != 0 {
				s.failAt(keyAt, "key %q given twice", key)
			}
			f.seen |= 1 << i
			from := s.i
			s.value(sh.Props[i].Shape)
			f.span[i] = [2]int32{int32(from), int32(s.i)}
		case sh.Values != nil:
			s.value(sh.Values)
		case sh.Closed:
			s.failAt(keyAt, "additional property %q not allowed", key)
		default:
			s.skip()
		}
	}
	s.leave(top)
	for i, p := range sh.Props {
		if p.Required && f.seen&(1<<i) == 0 {
			s.failAt(start, "missing property '%s'", p.Name)
		}
	}
	if sh.Cond != nil {
		if msg := sh.Cond(&f); msg != "" {
			s.failAt(start, "%s", msg)
		}
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

// key reads an object's key: its text, escapes resolved.
func (s *scanner) key() []byte {
	if s.next() != '"' {
		s.syntax()
	}
	from := s.i + 1
	esc := s.stringEnd()
	raw := s.b[from : s.i-1]
	if esc {
		return unescape(raw)
	}
	return raw
}

func (s *scanner) array(sh *Shape) {
	start := s.i
	s.i++
	top := s.enter()
	n := 0
	for more := s.open(']'); more; more = s.more(']') {
		s.path[top] = pathSeg{idx: n}
		s.value(sh.Items)
		n++
	}
	s.leave(top)
	if n < sh.MinItems {
		s.failAt(start, "minItems: got %d, want %d", n, sh.MinItems)
	}
}

func (s *scanner) str(sh *Shape) {
	start := s.i
	esc := s.stringEnd()
	v := s.b[start+1 : s.i-1]
	if sh.NonEmpty && len(v) == 0 {
		s.failAt(start, "an empty string, want one of at least one character")
	}
	if sh.Enum == nil && sh.Pattern == nil {
		return
	}
	if esc {
		v = unescape(v)
	}
	if sh.Enum != nil && !oneOf(sh.Enum, v) {
		s.failAt(start, "value must be one of '%s'", strings.Join(sh.Enum, "', '"))
	}
	if sh.Pattern != nil && !sh.Pattern.Match(v) {
		s.failAt(start, "%q does not match pattern '%s'", v, sh.Pattern.Text)
	}
}

func oneOf(enum []string, v []byte) bool {
	for _, e := range enum {
		if e == string(v) {
			return true
		}
	}
	return false
}

// stringEnd steps past the string at the cursor, whether it holds an
// escape. Bytes that are not UTF-8 pass, as encoding/json lets them.
func (s *scanner) stringEnd() (esc bool) {
	start := s.i
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return esc
		case c == '\\':
			esc = true
			s.escape()
		case c < 0x20:
			s.failAt(s.i, "not JSON: control character %q in a string", c)
		default:
			s.i++
		}
	}
	s.failAt(start, "not JSON: unterminated string")
	return false
}

func (s *scanner) escape() {
	if s.i+1 >= len(s.b) {
		s.failAt(s.i, "not JSON: unterminated string")
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
	case 'u':
		if s.i+6 > len(s.b) {
			s.failAt(s.i, "not JSON: unterminated string")
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if hexVal(h) < 0 {
				s.failAt(s.i, "not JSON: bad \\u escape")
			}
		}
		s.i += 6
	default:
		s.failAt(s.i, "not JSON: bad escape")
	}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// unescape resolves the escapes of a string's checked text. A character
// past ASCII from an escape becomes 0xFF, which no enum, key or pattern
// of the schemas holds, as no character past ASCII matches them: the
// result is for comparing, not for showing.
func unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hexVal(raw[i+1])<<12 | hexVal(raw[i+2])<<8 | hexVal(raw[i+3])<<4 | hexVal(raw[i+4])
			i += 4
			if r >= 0x80 {
				r = 0xFF
			}
			out = append(out, byte(r))
		default:
			out = append(out, raw[i])
		}
	}
	return out
}

// integer checks a number written as plain digits against sh; any other
// number is refused, whether or not its value is an integer.
func (s *scanner) integer(sh *Shape) {
	start := s.i
	s.number()
	v := s.b[start:s.i]
	plain := v[0] != '-'
	for _, c := range v {
		plain = plain && c >= '0' && c <= '9'
	}
	switch {
	case !plain:
		s.failAt(start, "got %s, want an integer written in plain digits", bounded(string(v), 40))
	case sh.Type == One && string(v) != "1":
		s.failAt(start, "value must be 1")
	case len(v) < 19:
		if n, _ := strconv.ParseInt(string(v), 10, 64); n < sh.Minimum {
			s.failAt(start, "minimum: got %d, want %d", n, sh.Minimum)
		}
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
		s.failAt(start, "not JSON: a bad number")
	}
	if s.next() == '.' {
		s.i++
		if s.digits() == 0 {
			s.failAt(start, "not JSON: a bad number")
		}
	}
	if c := s.next(); c == 'e' || c == 'E' {
		s.i++
		if c := s.next(); c == '+' || c == '-' {
			s.i++
		}
		if s.digits() == 0 {
			s.failAt(start, "not JSON: a bad number")
		}
	}
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// skip steps past any value, checking only that it is JSON.
func (s *scanner) skip() {
	switch c := s.next(); c {
	case '{':
		s.i++
		top := s.enter()
		for more := s.open('}'); more; more = s.more('}') {
			s.path[top] = pathSeg{key: s.key()}
			s.ws()
			if s.next() != ':' {
				s.syntax()
			}
			s.i++
			s.ws()
			s.skip()
		}
		s.leave(top)
	case '[':
		s.i++
		top := s.enter()
		n := 0
		for more := s.open(']'); more; more = s.more(']') {
			s.path[top] = pathSeg{idx: n}
			s.skip()
			n++
		}
		s.leave(top)
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
