// Package schemagen writes the JSON Schema files of schema/ from the Go
// types of the documents they describe, and holds the committed files
// to what the types generate (Compare).
package schemagen

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/guestcheck/guestcheck/internal/shared/reportv1"
	"github.com/guestcheck/guestcheck/internal/testenv"
	"github.com/guestcheck/guestcheck/schema"
)

// Doc is one generated schema file: its name under schema/ (also its
// $id's), its title and description, and the Go type of its document's
// root with the rules of the types beyond their fields' tags.
type Doc struct {
	File, Title, Desc string
	Root              reflect.Type
	Types             reportv1.Types
}

// Compare generates d and holds schema/d.File to it, or rewrites the file
// when update is set (the calling package's -update flag): the Go types
// are the one definition of a document, the file its published form.
func Compare(t testing.TB, d Doc, update bool) {
	t.Helper()
	want, err := JSONSchema(d)
	if err != nil {
		t.Fatal(err)
	}
	_, self, _, _ := runtime.Caller(0)
	testenv.Golden(t, filepath.Join(filepath.Dir(self), "..", "..", "..", "schema", d.File), string(want), update)
}

// JSONSchema writes the JSON Schema (draft 2020-12) of d's document from
// the Go types: their JSON fields, their schema and doc tags, and
// d.Types' rules. Objects stay open to keys they do not name unless their
// rule closes them, since changes within a schema version are additive.
func JSONSchema(d Doc) ([]byte, error) {
	g := gen{types: d.Types, defs: map[string]any{}}
	body := g.object(d.Root, "")
	out := obj{{"$schema", "https://json-schema.org/draft/2020-12/schema"}, {"$id", schema.Base + d.File},
		{"title", d.Title}, {"description", d.Desc + " " + stricter}}
	out = append(out, body...)
	if len(g.defs) > 0 {
		names := make([]string, 0, len(g.defs))
		for n := range g.defs {
			names = append(names, n)
		}
		slices.Sort(names)
		var defs obj
		for _, n := range names {
			defs = append(defs, kv{n, g.defs[n]})
		}
		out = append(out, kv{"$defs", defs})
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("schema %s: %v", d.File, err)
	}
	return b.Bytes(), nil
}

// stricter is what guestcheck's readers (CheckJSON) ask beyond what a
// JSON Schema validator checks; TestSchemaAgreesWithReaders
// (internal/host/fleet) finds no other difference.
const stricter = "guestcheck's own readers (sealprep prove, guestcheck fleet --merge) also refuse an integer not written in plain digits (1.0, 1e2) or beyond 64 bits, a date-time that is no real time (30 February), a key given twice, and a key that is a property's name in other case."

// obj is a JSON object that keeps its keys' order, so that the files
// are stable and read in the order of the Go types.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes o's keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		v, err := marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

type gen struct {
	types reportv1.Types
	defs  map[string]any
}

// value is the schema of a value of type t in field f.
func (g *gen) value(t reflect.Type, f reportv1.Field) obj {
	for t.Kind() == reflect.Pointer {
		t = t.Elem() // JSON has no pointers: absent is omitempty's
	}
	rule := g.types[t]
	var s obj
	switch {
	case rule.Ref != "":
		s = obj{{"$ref", rule.Ref}}
	case rule.Def != "":
		if _, done := g.defs[rule.Def]; !done {
			g.defs[rule.Def] = nil // taken: a type may hold itself
			g.defs[rule.Def] = g.inline(t, reportv1.Field{})
		}
		s = obj{{"$ref", "#/$defs/" + rule.Def}}
	default:
		s = g.inline(t, f)
	}
	if f.Doc != "" {
		s = append(s, kv{"description", f.Doc})
	}
	return s
}

// inline is t's schema in place, with f's tag.
func (g *gen) inline(t reflect.Type, f reportv1.Field) obj {
	rule := g.types[t]
	var s obj
	switch {
	case t == reflect.TypeFor[time.Time]():
		s = obj{{"type", "string"}, {"format", "date-time"}, {"pattern", reportv1.Patterns["datetime"]}}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String && g.types[t.Elem()].Enum == nil:
		// The field's string rules are each item's.
		s = obj{{"type", "array"}, {"items", g.str(g.types[t.Elem()], f)}}
		if f.MinItems > 0 {
			s = append(s, kv{"minItems", f.MinItems})
		}
	case t.Kind() == reflect.Slice:
		s = obj{{"type", "array"}, {"items", g.value(t.Elem(), reportv1.Field{})}}
		if f.MinItems > 0 {
			s = append(s, kv{"minItems", f.MinItems})
		}
	case t.Kind() == reflect.Map:
		s = obj{{"type", "object"}, {"additionalProperties", g.value(t.Elem(), reportv1.Field{})}}
	case t.Kind() == reflect.Struct:
		s = g.object(t, rule.Desc)
	case t.Kind() == reflect.String:
		s = g.str(rule, f)
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		if f.Const != "" {
			n, _ := strconv.Atoi(f.Const)
			return obj{{"const", n}}
		}
		s = obj{{"type", "integer"}}
		if f.Min != nil {
			s = append(s, kv{"minimum", *f.Min})
		}
	case t.Kind() == reflect.Bool:
		s = obj{{"type", "boolean"}}
	default:
		panic(fmt.Sprintf("reportv1: no JSON Schema for %s", t))
	}
	if rule.Desc != "" && t.Kind() != reflect.Struct {
		s = append(s, kv{"description", rule.Desc})
	}
	return s
}

func (g *gen) str(rule reportv1.TypeRule, f reportv1.Field) obj {
	switch {
	case f.Const != "":
		return obj{{"const", f.Const}}
	case f.Enum != nil:
		return obj{{"enum", f.Enum}}
	case rule.Enum != nil:
		return obj{{"enum", rule.Enum}}
	}
	s := obj{{"type", "string"}}
	if f.NonEmpty {
		s = append(s, kv{"minLength", 1})
	}
	if p := cmp.Or(f.Pattern, rule.Pattern); p != "" {
		switch p {
		case "date":
			s = append(s, kv{"format", "date"})
		case "datetime":
			s = append(s, kv{"format", "date-time"}) // as a time.Time's
		}
		s = append(s, kv{"pattern", reportv1.Patterns[p]})
	}
	return s
}

// object is a struct's schema: its properties in field order, the
// required ones, and its rule's closing and conditions.
func (g *gen) object(t reflect.Type, desc string) obj {
	rule := g.types[t]
	s := obj{{"type", "object"}}
	if desc != "" {
		s = append(s, kv{"description", desc})
	}
	var props obj
	var req []string
	for _, f := range reportv1.Fields(t) {
		props = append(props, kv{f.Name, g.value(t.Field(f.Index).Type, f)})
		if f.Req {
			req = append(req, f.Name)
		}
	}
	if req != nil {
		s = append(s, kv{"required", req})
	}
	s = append(s, kv{"properties", props})
	if rule.Closed {
		s = append(s, kv{"additionalProperties", false})
	}
	if rule.Cond != "" {
		var cond obj
		if err := json.Unmarshal([]byte(rule.Cond), &cond); err != nil {
			panic(fmt.Sprintf("reportv1: %s's Cond: %v", t, err))
		}
		s = append(s, cond...)
	}
	return s
}

// UnmarshalJSON reads o keeping its keys' order, for reportv1.TypeRule.Cond.
func (o *obj) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		*o = append(*o, kv{k.(string), raw})
	}
	return nil
}

// Report is schema/report-v1.schema.json.
var Report = Doc{File: "report-v1.schema.json", Root: reflect.TypeFor[reportv1.Report](), Types: reportv1.ReportTypes,
	Title: "guestcheck report, schema version 1",
	Desc:  "Output of guestcheck --format json. Changes within schema_version 1 are additive: consumers must ignore keys they do not know."}

// FindingLine is schema/finding-line-v1.schema.json.
var FindingLine = Doc{File: "finding-line-v1.schema.json", Root: reflect.TypeFor[reportv1.FindingLine](), Types: reportv1.FindingLineTypes,
	Title: "guestcheck finding line, version 1",
	Desc:  "One line of guestcheck --format jsonl: one finding of the report (schema/report-v1.schema.json) with the run and check it belongs to. Additive changes only: consumers must ignore keys they do not know."}
